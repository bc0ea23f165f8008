#pragma once
// RFC 6901 JSON Pointers: how `_ctxguard.path` names a cut array and how cursors find it again;
// and the one-step lookup and removal of a member.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace ctxguard {

// Appends "/" and `key` with `~` escaped as `~0` and `/` as `~1`.
void append_pointer_key(std::string& pointer, std::string_view key);
void append_pointer_index(std::string& pointer, std::size_t index);

// The value `pointer` names inside `root`, or nullptr (no such member, bad syntax, an index that
// is out of range or not canonical like "01").
const boost::json::value* find_pointer(const boost::json::value& root, std::string_view pointer);

// The member `key` of `object` when it is a string; nullopt when absent or of another type.
std::optional<std::string_view> string_member(const boost::json::object& object,
                                              std::string_view key);

// Removes the member `key` of `object`, keeping the order of the others (Boost.JSON's own erase
// moves the last member into the gap); 1 when it was there, else 0.
std::size_t erase_member(boost::json::object& object, std::string_view key);

}  // namespace ctxguard
