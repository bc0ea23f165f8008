#pragma once
// Log detection: which lines start a log entry (the chunker keeps an entry with its
// continuation lines: stack traces, indented lines, "Caused by"), and whether a text is a log.
// Hand-written scanning, no regular expressions: it runs over every line of a chunked text.

#include <string_view>

namespace ctxguard::pipeline {

// True when the text looks like a log: at least 2 and at least 20% of its first 1,000 non-empty
// lines start an entry (a date/time such as 2024-05-01, 2024/05/01, 12:30:45, an RFC 3164
// "May  1 12:30:45", optionally after '[' or '<N>'; or a level word such as ERROR, WARN(ING),
// INFO, NOTICE, DEBUG, TRACE, FATAL, CRITICAL in capitals, optionally in brackets, followed by a
// non-letter).
bool looks_like_log(std::string_view text);

// Whether `line` (without its line break) starts a log entry, by the rule above.
bool starts_log_entry(std::string_view line);

// The level `word` names, upper case, whatever its case ("warning" and "WARN" are WARN), or empty:
// TRACE, DEBUG, INFO, NOTICE, WARN, ERROR, FATAL, CRITICAL. The one list of log levels.
std::string_view log_level(std::string_view word);

// Whether `word` is a month as RFC 3164 writes it ("May").
bool is_month_abbreviation(std::string_view word);

}  // namespace ctxguard::pipeline
