#pragma once
// The closed set of errors ctxguard reports on its data path, as a std::error_category so they
// travel as values (`Result<T>`) instead of exceptions: one bad message must never unwind the
// proxy.

#include <string>
#include <system_error>

#include <boost/system/result.hpp>

namespace ctxguard {

// Values are appended as the data path grows; each gets one message in error.cpp.
enum class Error {
  kInvalidJson = 1,  // a line is not valid JSON
  kEmptyBatch,       // `[]` is not a valid batch
  kCursorMalformed,  // a cursor that is not one ctxguard could have issued
  kCursorForged,     // a well-formed cursor whose signature does not verify (tampered or old key)
  kCursorExpired,    // a genuine cursor older than the cursor TTL
  kInvalidRecord,    // a telemetry line that is JSON but not a call record
  kJsonTooLarge,     // valid so far, but its parsed form would exceed the memory allowed
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(Error e) noexcept {
  return {static_cast<int>(e), error_category()};
}

// `boost::system::result` is the std::expected of C++20 with Boost 1.81: a value or an error code.
template <class T>
using Result = boost::system::result<T, std::error_code>;

}  // namespace ctxguard

template <>
struct std::is_error_code_enum<ctxguard::Error> : std::true_type {};
