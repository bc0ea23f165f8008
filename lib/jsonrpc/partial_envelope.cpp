#include "jsonrpc/partial_envelope.hpp"

#include <cstddef>
#include <cstdint>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>

namespace ctxguard::jsonrpc {
namespace {

namespace json = boost::json;
using boost::system::error_code;

bool is_id(const json::value& value) {
  return value.is_number() || value.is_string() || value.is_null();
}

void take_member(PartialEnvelope& envelope, std::string_view key, const json::value& value) {
  if (key == "id" && is_id(value)) envelope.id = value;
  if (key == "method" && value.is_string()) envelope.method = std::string(value.get_string());
}

// Parser events of the head: the scalar members of the top-level object, as far as they go.
// Values inside nested containers are ignored, and a member cut by the end of the head never
// completes, so it is never reported.
class HeadMembers {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  explicit HeadMembers(PartialEnvelope& envelope) : envelope_(envelope) {}

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) {
    ++depth_;
    return true;
  }
  bool on_object_end(std::size_t, error_code&) {
    --depth_;
    return true;
  }
  bool on_array_begin(error_code&) {
    ++depth_;
    return depth_ > 1;  // a batch (top-level array): nothing to read here
  }
  bool on_array_end(std::size_t, error_code&) {
    --depth_;
    return true;
  }
  bool on_key_part(std::string_view part, std::size_t, error_code&) {
    if (depth_ == 1) key_part_.append(part);
    return true;
  }
  bool on_key(std::string_view part, std::size_t, error_code&) {
    if (depth_ == 1) {
      key_part_.append(part);
      key_.swap(key_part_);
      key_part_.clear();
    }
    return true;
  }
  bool on_string_part(std::string_view part, std::size_t, error_code&) {
    if (depth_ == 1) string_.append(part);
    return true;
  }
  bool on_string(std::string_view part, std::size_t, error_code&) {
    if (depth_ == 1) {
      string_.append(part);
      take(json::value(string_));
      string_.clear();
    }
    return true;
  }
  bool on_number_part(std::string_view, error_code&) { return true; }
  bool on_int64(std::int64_t number, std::string_view, error_code&) { return take(number); }
  bool on_uint64(std::uint64_t number, std::string_view, error_code&) { return take(number); }
  bool on_double(double number, std::string_view, error_code&) { return take(number); }
  bool on_bool(bool flag, error_code&) { return take(flag); }
  bool on_null(error_code&) { return take(nullptr); }
  bool on_comment_part(std::string_view, error_code&) { return true; }
  bool on_comment(std::string_view, error_code&) { return true; }

 private:
  bool take(const json::value& value) {
    if (depth_ == 1) take_member(envelope_, key_, value);
    return true;
  }

  PartialEnvelope& envelope_;
  int depth_ = 0;
  std::string key_;       // the current top-level key
  std::string key_part_;  // a top-level key being read
  std::string string_;    // a top-level string value being read
};

void read_head(std::string_view head, PartialEnvelope& envelope) {
  json::basic_parser<HeadMembers> parser(json::parse_options{}, envelope);
  error_code ec;
  // `more`: the head is a prefix; whatever it cuts is simply never completed.
  parser.write_some(true, head.data(), head.size(), ec);
}

// The tail's members: from the first key (a '"' after '{' or ',') from which the rest of the
// tail, opened with '{', parses as one object. That run ends at the line's final '}', so its
// members are the top-level object's own: a key inside a nested value would leave that value's
// closing brackets unmatched, and a '"' after '{' or ',' cannot be inside a string (the quotes
// of string contents are escaped).
void read_tail(std::string_view tail, PartialEnvelope& envelope) {
  for (std::size_t at = 0; at < tail.size(); ++at) {
    if (tail[at] != '"') continue;
    std::size_t before = at;
    while (before > 0 && (tail[before - 1] == ' ' || tail[before - 1] == '\t')) --before;
    if (before == 0 || (tail[before - 1] != ',' && tail[before - 1] != '{')) continue;
    std::string object = "{";
    object.append(tail.substr(at));
    error_code ec;
    const json::value members = json::parse(object, ec);
    if (ec || !members.is_object()) continue;
    // The head's findings stand: it was read by a real parser from the line's start.
    PartialEnvelope found;
    for (const auto& member : members.get_object())
      take_member(found, member.key(), member.value());
    if (!envelope.id) envelope.id = std::move(found.id);
    if (!envelope.method) envelope.method = std::move(found.method);
    return;
  }
}

}  // namespace

PartialEnvelope read_partial_envelope(std::string_view head, std::string_view tail) {
  PartialEnvelope envelope;
  read_head(head, envelope);
  if (!envelope.id || !envelope.method) read_tail(tail, envelope);
  return envelope;
}

}  // namespace ctxguard::jsonrpc
