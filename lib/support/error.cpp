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
      case Error::kEmptyBatch:
        return "empty JSON-RPC batch";
      case Error::kCursorMalformed:
        return "the cursor is malformed";
      case Error::kCursorForged:
        return "the cursor's signature does not match";
      case Error::kCursorExpired:
        return "the cursor has expired";
      case Error::kInvalidRecord:
        return "not a ctxguard call record";
      case Error::kJsonTooLarge:
        return "the JSON would take more memory than allowed once parsed";
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
