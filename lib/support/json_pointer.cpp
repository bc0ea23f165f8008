#include "support/json_pointer.hpp"

#include <charconv>
#include <system_error>

namespace ctxguard {

void append_pointer_key(std::string& pointer, std::string_view key) {
  pointer += '/';
  for (const char c : key) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer += c;
    }
  }
}

void append_pointer_index(std::string& pointer, std::size_t index) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, index);
  pointer += '/';
  pointer.append(buffer, result.ptr);
}

const boost::json::value* find_pointer(const boost::json::value& root, std::string_view pointer) {
  // Boost.JSON 1.81 has value::find_pointer; it accepts "01" and "-" the same as RFC 6901 says it
  // must not resolve them, and cursors must name exactly one value, so parse it here.
  const boost::json::value* current = &root;
  std::string token;
  while (!pointer.empty()) {
    if (pointer.front() != '/') return nullptr;
    pointer.remove_prefix(1);
    const std::size_t end = pointer.find('/');
    const std::string_view raw = pointer.substr(0, end);
    pointer = end == std::string_view::npos ? std::string_view{} : pointer.substr(end);
    token.clear();
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token += raw[i];
      } else if (i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        return nullptr;
      }
    }
    if (const boost::json::object* object = current->if_object()) {
      current = object->if_contains(token);
      if (current == nullptr) return nullptr;
    } else if (const boost::json::array* array = current->if_array()) {
      if (token.empty() || (token.size() > 1 && token.front() == '0')) return nullptr;
      std::size_t index = 0;
      const auto [last, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      if (ec != std::errc{} || last != token.data() + token.size() || index >= array->size()) {
        return nullptr;
      }
      current = &(*array)[index];
    } else {
      return nullptr;
    }
  }
  return current;
}

std::optional<std::string_view> string_member(const boost::json::object& object,
                                              std::string_view key) {
  const boost::json::value* value = object.if_contains(key);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return std::string_view(value->get_string());
}

std::size_t erase_member(boost::json::object& object, std::string_view key) {
  if (!object.contains(key)) return 0;
  boost::json::object kept(object.storage());
  kept.reserve(object.size() - 1);
  for (auto& member : object) {
    if (member.key() != key) kept.emplace(member.key(), std::move(member.value()));
  }
  object = std::move(kept);
  return 1;
}

}  // namespace ctxguard
