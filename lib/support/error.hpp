#pragma once
// The closed set of errors ctxguard reports on its data path, as a std::error_category so they
// travel as values (`Result<T>`) instead of exceptions: one bad message must never unwind the
// proxy.

#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

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

// What a person must change, in words that name it (a file, a flag, a key, a value): start-up,
// configuration, wrap and stats report these; the data path reports `Error`s, and each module's
// refusals (FetchRefusal) are a closed enum of its own.
struct Problem {
  std::string message;
};
// As test failures print it.
inline std::ostream& operator<<(std::ostream& out, const Problem& problem) {
  return out << problem.message;
}

// A value, or the problem that kept it from being made (`Checked<>`: done, or why not). A Problem
// is made from a string too: a Checked<std::string> takes its value as
// `{boost::system::in_place_value, text}`.
template <class T = void>
using Checked = boost::system::result<T, Problem>;

// Every problem of an input read whole (a configuration: each names its key or source), so that
// one reading shows the user all there is to fix.
struct Problems {
  std::vector<std::string> messages;
};
template <class T>
using CheckedAll = boost::system::result<T, Problems>;
inline std::ostream& operator<<(std::ostream& out, const Problems& problems) {
  for (const std::string& message : problems.messages) out << message << "\n";
  return out;
}

// `value()` on a problem: a caller that did not look first. Never on the message path.
[[noreturn]] inline void throw_exception_from_error(const Problem& problem,
                                                    const boost::source_location& /*where*/) {
  throw std::runtime_error(problem.message);
}
[[noreturn]] inline void throw_exception_from_error(const Problems& problems,
                                                    const boost::source_location& /*where*/) {
  throw std::runtime_error(problems.messages.empty() ? "" : problems.messages.front());
}

}  // namespace ctxguard

template <>
struct std::is_error_code_enum<ctxguard::Error> : std::true_type {};
