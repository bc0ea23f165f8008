#include "pipeline/fit/summarize.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/fit/table_form.hpp"
#include "support/json_pointer.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

// Appends "/key" or "/index" to `path` and takes it off again when it goes out of scope.
class PathStep {
 public:
  PathStep(std::string& path, std::string_view key) : path_(path), size_(path.size()) {
    append_pointer_key(path_, key);
  }
  PathStep(std::string& path, std::size_t index) : path_(path), size_(path.size()) {
    append_pointer_index(path_, index);
  }
  PathStep(const PathStep&) = delete;
  PathStep& operator=(const PathStep&) = delete;
  ~PathStep() { path_.resize(size_); }

 private:
  std::string& path_;
  std::size_t size_;
};

}  // namespace

std::optional<std::string> cut_string(std::string_view value, std::size_t max_chars,
                                      std::string_view path) {
  // Most strings are short: bytes bound characters from above.
  if (max_chars == 0 || value.size() <= max_chars) return std::nullopt;
  const std::size_t end = text::prefix_bytes(value, max_chars);
  if (end >= value.size()) return std::nullopt;
  // Back to the last word boundary in the final fifth, so the prefix ends on a whole word.
  std::size_t cut = end;
  const std::size_t floor = end - end / 5;
  while (cut > floor && !text::is_blank_byte(value[cut - 1])) --cut;
  if (cut <= floor) cut = end;
  while (cut > 0 && text::is_blank_byte(value[cut - 1])) --cut;
  const std::size_t rest = text::char_count(value.substr(cut));  // characters left out
  return fmt::format("{}…[+{} chars: {}]", value.substr(0, cut), rest, path);
}

bool tighten(ValueView& view) {
  if (view.max_string_chars > kMinStringChars) {
    view.max_string_chars = std::max(kMinStringChars, view.max_string_chars / 2);
    return true;
  }
  if (view.max_depth > 1) {
    --view.max_depth;
    return true;
  }
  return false;
}

namespace {

// The member array of `object` with the most items (the first of equals), if any is non-empty.
const json::key_value_pair* largest_array_member(const json::object& object) {
  const json::key_value_pair* largest = nullptr;
  for (const json::key_value_pair& member : object) {
    const json::array* array = member.value().if_array();
    if (array != nullptr && !array->empty() &&
        (largest == nullptr || array->size() > largest->value().get_array().size())) {
      largest = &member;
    }
  }
  return largest;
}

// A key as a placeholder names it: bare when it is a plain word, else as a JSON string.
void append_key_name(std::string& out, std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
  if (plain) {
    out += key;
  } else {
    write_json_string(out, key);
  }
}

std::string_view plural(std::size_t count, std::string_view one, std::string_view many) {
  return count == 1 ? one : many;
}

}  // namespace

std::string collapsed_value(const json::value& value, std::string_view path) {
  std::string text;
  if (const json::object* object = value.if_object()) {
    text = fmt::format("[object of {} {}", object->size(), plural(object->size(), "key", "keys"));
    if (const json::key_value_pair* largest = largest_array_member(*object)) {
      const std::size_t items = largest->value().get_array().size();
      text += " (";
      append_key_name(text, largest->key());
      text += fmt::format(": {} {})", items, plural(items, "item", "items"));
    }
  } else {
    const std::size_t items = value.as_array().size();
    text = fmt::format("[array of {} {}", items, plural(items, "item", "items"));
  }
  text += ": ";
  text += path;
  text += ']';
  return text;
}

std::optional<std::string> collapsed_text(const json::value& value, std::string_view path) {
  std::string placeholder = collapsed_value(value, path);
  std::string written;
  write_json_string(written, placeholder);
  if (!json_longer_than(value, written.size() + kPlaceholderMarginBytes)) return std::nullopt;
  return placeholder;
}

bool collapses(const json::value& value, const ValueView& view, Nesting nesting) {
  if (view.shows_whole(value)) return false;
  if (const json::object* object = value.if_object()) {
    return view.max_depth != 0 && nesting.depth > view.max_depth && !object->empty();
  }
  const json::array* array = value.if_array();
  if (array == nullptr || array->empty()) return false;
  if (view.max_depth != 0 && nesting.depth > view.max_depth) return true;
  return view.max_array_nesting != 0 && nesting.arrays >= view.max_array_nesting &&
         std::any_of(array->begin(), array->end(),
                     [](const json::value& item) { return item.is_object() || item.is_array(); }) &&
         json_longer_than(value, kMinBreadthCollapseBytes);
}

FieldUse field_use(const FieldList& fields, std::string_view key, FieldList& sub) {
  sub.clear();
  FieldUse use = FieldUse::kDrop;
  for (const std::string& field : fields) {
    if (field == key) return FieldUse::kWhole;
    if (field.size() > key.size() + 1 && field.compare(0, key.size(), key) == 0 &&
        field[key.size()] == '.') {
      sub.push_back(field.substr(key.size() + 1));
      use = FieldUse::kPartial;
    }
  }
  return use;
}

const FieldList* projection_of(const ValueView& view, const json::object& object,
                               const json::array* parent, const FieldList* inherited) {
  if (!view.object_fields.empty()) {
    const auto own = view.object_fields.find(&object);
    if (own != view.object_fields.end()) return &own->second;
  }
  if (parent != nullptr && !view.item_fields.empty()) {
    const auto items = view.item_fields.find(parent);
    if (items != view.item_fields.end()) return &items->second;
  }
  return inherited;
}

bool shows_as_table(const json::array& array, ItemWindow window, const ValueView& view,
                    std::size_t depth, const FieldList* inherited) {
  if (!view.tables || window.count < 2 || inherited != nullptr ||
      view.item_fields.contains(&array) || (view.max_depth != 0 && depth + 1 > view.max_depth) ||
      !is_uniform_flat(array)) {
    return false;
  }
  if (view.max_string_chars == 0) return true;
  for (std::size_t i = window.begin; i < window.begin + window.count; ++i) {
    for (const json::key_value_pair& member : array[i].get_object()) {
      const json::string* string = member.value().if_string();
      // Bytes bound characters from above: most strings need no count.
      if (string != nullptr && string->size() > view.max_string_chars &&
          text::char_count(*string) > view.max_string_chars) {
        return false;
      }
    }
  }
  return true;
}

namespace {

// Notes that the projection of `projected` left `key` out of a record written.
void note_left_out(ViewStats& stats, const void* projected, std::string_view key) {
  std::vector<std::string>& left_out = stats.fields_left_out[projected];
  if (std::find(left_out.begin(), left_out.end(), key) == left_out.end()) {
    left_out.emplace_back(key);
  }
}

void write_value(std::string& out, const json::value& value, const json::array* parent,
                 const ValueView& view, const CutMap& cuts, std::string& path, Nesting nesting,
                 const FieldList* inherited, ViewStats& stats) {
  // `text` stands for the value: written, and noted with where the value stands (its inherited
  // projection copied: it lives in a caller's frame).
  const auto write_shortened = [&](std::string text) {
    write_json_string(out, text);
    stats.shortened.push_back(
        Shortened{.value = &value,
                  .parent = parent,
                  .inherited = inherited != nullptr ? std::optional(*inherited) : std::nullopt,
                  .nesting = nesting,
                  .path = path,
                  .shown = std::move(text)});
  };
  const json::array* array = value.if_array();
  const json::object* object = value.if_object();
  if ((array != nullptr || object != nullptr) && collapses(value, view, nesting)) {
    if (std::optional<std::string> placeholder = collapsed_text(value, path)) {
      ++stats.values_collapsed;
      write_shortened(std::move(*placeholder));
      return;
    }
  }
  if (array != nullptr) {
    const auto cut = cuts.find(array);
    const ItemWindow window = cut != cuts.end() ? cut->second : ItemWindow{0, array->size()};
    if (shows_as_table(*array, window, view, nesting.depth, inherited)) {
      write_table(out, *array, window);
      stats.tables.push_back(path);
      return;
    }
    out += '[';
    for (std::size_t i = window.begin; i < window.begin + window.count; ++i) {
      if (i != window.begin) out += ',';
      const PathStep step(path, i);
      write_value(out, (*array)[i], array, view, cuts, path, nesting.in_array(), inherited, stats);
    }
    out += ']';
    return;
  }
  if (object != nullptr) {
    const FieldList* fields = projection_of(view, *object, parent, inherited);
    // The projection `fields` are (none for a sub-list of a rule's dotted field).
    const void* projected = nullptr;
    if (fields != nullptr && fields != inherited) {
      projected = view.object_fields.contains(object) ? static_cast<const void*>(object) : parent;
    }
    FieldList sub;
    out += '{';
    bool first = true;
    for (const json::key_value_pair& member : *object) {
      const FieldUse use =
          fields != nullptr ? field_use(*fields, member.key(), sub) : FieldUse::kWhole;
      if (use == FieldUse::kDrop) {
        if (projected != nullptr) note_left_out(stats, projected, member.key());
        continue;
      }
      if (!first) out += ',';
      first = false;
      write_json_string(out, member.key());
      out += ':';
      const PathStep step(path, member.key());
      write_value(out, member.value(), nullptr, view, cuts, path, nesting.in_object(),
                  use == FieldUse::kPartial ? &sub : nullptr, stats);
    }
    out += '}';
    return;
  }
  if (const json::string* string = value.if_string();
      string != nullptr && !view.shows_whole(value)) {
    if (auto cut = cut_string(*string, view.max_string_chars, path)) {
      ++stats.strings_cut;
      write_shortened(std::move(*cut));
      return;
    }
  }
  write_json_scalar(out, value);
}

}  // namespace

void write_view(std::string& out, const json::value& value, const ValueView& view,
                const CutMap& cuts, std::string& path, ViewStats& stats) {
  write_value(out, value, nullptr, view, cuts, path, Nesting{}, nullptr, stats);
}

std::string write_view_at(const Shortened& at, const ValueView& view, const CutMap& cuts) {
  std::string out;
  std::string path = at.path;
  ViewStats stats;
  const FieldList* inherited = at.inherited ? &*at.inherited : nullptr;
  write_value(out, *at.value, at.parent, view, cuts, path, at.nesting, inherited, stats);
  return out;
}

void write_view_item(std::string& out, const json::value& item, const json::array& parent,
                     const ValueView& view, const CutMap& cuts, std::string& path,
                     ViewStats& stats) {
  write_value(out, item, &parent, view, cuts, path, kPageItem, nullptr, stats);
}

}  // namespace ctxguard::pipeline
