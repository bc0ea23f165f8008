#include "support/error.hpp"

namespace ctxguard {
namespace {

class ErrorCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "ctxguard"; }

  std::string message(int value) const override {
    switch (static_cast<Error>(value)) {
      case Error::kInvalidJson:
        return "line is not valid JSON";
      case Error::kNotJsonRpc:
        return "JSON value is not a JSON-RPC 2.0 message";
      case Error::kEmptyBatch:
        return "empty JSON-RPC batch";
      case Error::kMessageTooLarge:
        return "message exceeds the maximum message size";
      case Error::kUsage:
        return "command line not understood";
      case Error::kMissingCommand:
        return "missing server command";
    }
    return "unknown ctxguard error";
  }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const ErrorCategory category;
  return category;
}

}  // namespace ctxguard
