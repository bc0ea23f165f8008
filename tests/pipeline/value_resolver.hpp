#pragma once
// The client side of summarization: rebuilds the server's whole value from ctxguard's answers
// alone, the way a model would reach each part of it. It follows every page cursor (as
// rebuild_json does), and every shortened value by path from `_ctxguard.resultCursor`:
//   - a cut string "prefix…[+N chars: PATH]" and a collapsed value "[object of N keys: PATH]" /
//     "[array of N items: PATH]" are replaced by the value fetched at PATH (itself completed the
//     same way: it may come paginated, summarized again, or as text pieces);
//   - a projected record (listed in `_ctxguard.projections`) gets each omitted field it lacks
//     fetched at RECORD/FIELD (an isError there means the record never had that field).
// Every answer is checked against the budget, and every PATH against where its placeholder sits,
// so a wrong path or an unreachable value fails the test instead of going unnoticed.

#include <deque>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "pipeline_fixture.hpp"
#include "support/json_pointer.hpp"

namespace ctxguard::pipeline::testing {

class ValueResolver {
 public:
  ValueResolver(Fixture& fixture, std::size_t page_budget)
      : fixture_(fixture), page_budget_(page_budget) {}

  // The original JSON of a first answer whose content item 0 is JSON (paginated or summarized).
  json::value rebuild(const json::object& first) {
    json::value shown = parse(text_at(first, 0));
    json::object meta = take_meta(shown, true);
    return complete(std::move(shown), "", std::move(meta));
  }

  std::size_t fetches() const { return fetches_; }
  std::size_t placeholders() const { return placeholders_; }
  std::size_t projected_fields() const { return projected_fields_; }

 private:
  // Removes `_ctxguard` from a shown value and returns it ({} when there is none), unwrapping
  // what carries it: {"items": [...]} for a wrapped top-level array in a first answer and for
  // every page, {"value": ...} for a scalar fetched by path.
  static json::object take_meta(json::value& shown, bool first_answer) {
    json::object* object = shown.if_object();
    if (object == nullptr || !object->contains("_ctxguard")) return {};
    json::object meta = object->at("_ctxguard").as_object();
    object->erase("_ctxguard");
    const char* wrapper = nullptr;
    if (meta.contains("valuePath")) {
      if (meta.contains("wrapped")) wrapper = "value";
    } else if (!first_answer || meta.contains("wrapped")) {
      wrapper = "items";
    }
    if (wrapper != nullptr) {
      json::value inner = object->at(wrapper);
      shown = std::move(inner);
    }
    return meta;
  }

  // {"columns": [...], "rows": [[...], ...]} back to the array of objects it stands for.
  static json::value from_table(const json::value& table) {
    const json::array& columns = table.at("columns").as_array();
    json::array items;
    for (const json::value& row : table.at("rows").as_array()) {
      json::object item;
      for (std::size_t c = 0; c < columns.size(); ++c) {
        item[columns[c].as_string()] = row.as_array().at(c);
      }
      items.push_back(std::move(item));
    }
    return items;
  }

  // Arrays `meta` says went out as tables (absolute paths) become arrays again in `value` (the
  // value at `base`).
  static void untable(json::value& value, const std::string& base, const json::object& meta) {
    const json::value* tables = meta.if_contains("tables");
    if (tables == nullptr) return;
    for (const json::value& table_path : tables->as_array()) {
      const std::string path(table_path.as_string());
      REQUIRE(path.compare(0, base.size(), base) == 0);
      std::error_code ec;
      json::value* table = value.find_pointer(path.substr(base.size()), ec);
      REQUIRE(table != nullptr);
      // A page's own table was turned back before its items were appended.
      if (table->is_object()) *table = from_table(*table);
    }
  }

  json::object fetch(json::object arguments) {
    ++fetches_;
    REQUIRE(fetches_ < 200000);  // a cursor loop
    INFO("fetch " << ctxguard::to_json(json::value(arguments)));
    json::object answer = fixture_.fetch_page(std::move(arguments));
    INFO("answer " << ctxguard::to_json(json::value(answer)).substr(0, 300));
    REQUIRE_FALSE(is_error(answer));
    require_within(fixture_, answer, page_budget_);
    return answer;
  }

  // The whole value at `path` (absolute), fetched by path. `kind` is what the caller expects:
  // "string" or "json" (a collapsed value), or "" when it cannot know (an omitted field).
  json::value value_at(const std::string& path, std::string_view kind) {
    REQUIRE(result_cursor_.has_value());
    return value_of(fetch({{"cursor", *result_cursor_}, {"path", path}}), path, kind);
  }

  // The whole value at `path` from `answer`, the answer to fetching it by path.
  json::value value_of(const json::object& answer, const std::string& path, std::string_view kind) {
    if (content_of(answer).size() == 2) {  // text pieces: a string, or JSON over the budget
      const json::object meta = parse(text_at(answer, 1)).at("_ctxguard").as_object();
      if (meta.contains("item")) {
        // An array whose first item alone is over the budget: the item as text pieces, the
        // items after it by their own cursor.
        REQUIRE(meta.at("item").at("path").as_string() == path);
        json::value items = json::array{item_of_pieces(fixture_, answer)};
        json::object rest;
        if (const json::value* after = meta.if_contains("nextItemsCursor")) {
          rest = json::object{{"path", path}, {"nextCursor", *after}};
        }
        return complete(std::move(items), path, std::move(rest));
      }
      REQUIRE(meta.at("valuePath").as_string() == path);
      const json::string& type = meta.at("valueType").as_string();
      if (!kind.empty()) REQUIRE(type == kind);
      std::string text = rebuild_text(fixture_, answer, 0);
      return type == "string" ? json::value(json::string(text)) : parse(text);
    }
    REQUIRE(kind != "string");
    json::value shown = parse(text_at(answer, 0));
    json::object meta = take_meta(shown, false);
    return complete(std::move(shown), path, std::move(meta));
  }

  // `value` is what one answer shows of the value at `base`; `meta` that answer's `_ctxguard`.
  json::value complete(json::value value, const std::string& base, json::object meta) {
    untable(value, base, meta);
    std::vector<json::object> metas;
    follow_pages(value, base, meta, metas);
    for (const json::object& seen : metas) {
      if (const json::value* cursor = seen.if_contains("resultCursor")) {
        if (!result_cursor_) result_cursor_ = *cursor;
      }
    }
    for (const json::object& seen : metas) add_projected_fields(value, base, seen);
    std::string path = base;
    resolve_placeholders(value, path);
    return value;
  }

  // Follows the page cursors of an answer (FIFO: pages before the cuts inside them), appending
  // items to the arrays under `base`; collects the `_ctxguard` of every answer seen.
  void follow_pages(json::value& value, const std::string& base, const json::object& meta,
                    std::vector<json::object>& metas) {
    std::deque<json::object> cuts{meta};
    while (!cuts.empty()) {
      json::object cut = std::move(cuts.front());
      cuts.pop_front();
      metas.push_back(cut);
      if (const json::value* others = cut.if_contains("otherCuts")) {
        for (const json::value& other : others->as_array()) cuts.push_back(other.as_object());
      }
      const json::value* next = cut.if_contains("nextCursor");
      if (next == nullptr || !cut.contains("path")) continue;
      json::array& target = array_at(value, base, std::string(cut.at("path").as_string()));
      const json::object page_result = fetch({{"cursor", *next}});
      if (content_of(page_result).size() == 2) {
        // One item alone over the budget comes as text pieces; the items after it go on.
        target.push_back(item_of_pieces(fixture_, page_result));
        const json::object piece = parse(text_at(page_result, 1)).at("_ctxguard").as_object();
        if (const json::value* after = piece.if_contains("nextItemsCursor")) {
          cuts.push_back(json::object{{"path", cut.at("path")}, {"nextCursor", *after}});
        }
        continue;
      }
      json::value page = parse(text_at(page_result, 0));
      json::object page_meta = page.at("_ctxguard").as_object();
      // A page's items may have gone out as a table.
      if (page.at("items").is_object()) page.as_object()["items"] = from_table(page.at("items"));
      REQUIRE(page_meta.at("offset").as_int64() == static_cast<std::int64_t>(target.size()));
      for (json::value& item : page.at("items").as_array()) target.push_back(std::move(item));
      // Tables inside the items are named by absolute index: they resolve now they are in place.
      untable(value, base, page_meta);
      cuts.push_back(std::move(page_meta));
    }
  }

  static json::array& array_at(json::value& value, const std::string& base,
                               const std::string& path) {
    INFO("array at " << path << " under " << base);
    REQUIRE(path.compare(0, base.size(), base) == 0);
    std::error_code ec;
    json::value* target = value.find_pointer(path.substr(base.size()), ec);
    REQUIRE(target != nullptr);
    REQUIRE(target->is_array());
    return target->as_array();
  }

  // Records of `meta`'s projections get the fields they lack (those the server sent).
  void add_projected_fields(json::value& value, const std::string& base, const json::object& meta) {
    const json::value* projections = meta.if_contains("projections");
    if (projections == nullptr) return;
    for (const json::value& projection : projections->as_array()) {
      const std::string path(projection.at("path").as_string());
      REQUIRE(path.compare(0, base.size(), base) == 0);
      std::error_code ec;
      json::value* group = value.find_pointer(path.substr(base.size()), ec);
      REQUIRE(group != nullptr);
      const json::array& omitted = projection.at("omittedFields").as_array();
      if (json::object* record = group->if_object()) {
        add_fields(*record, path, omitted);
        continue;
      }
      json::array& records = group->as_array();
      for (std::size_t i = 0; i < records.size(); ++i) {
        if (json::object* record = records[i].if_object()) {
          std::string record_path = path;
          append_pointer_index(record_path, i);
          add_fields(*record, record_path, omitted);
        }
      }
    }
  }

  void add_fields(json::object& record, const std::string& path, const json::array& omitted) {
    for (const json::value& field : omitted) {
      const std::string key(field.as_string());
      if (record.contains(key)) continue;
      std::string field_path = path;
      append_pointer_key(field_path, key);
      ++fetches_;
      const json::object answer =
          fixture_.fetch_page({{"cursor", *result_cursor_}, {"path", field_path}});
      require_within(fixture_, answer, page_budget_);
      if (is_error(answer)) continue;  // this record has no such field
      ++projected_fields_;
      record[key] = value_of(answer, field_path, "");
    }
  }

  // Replaces every placeholder in `value` (at `path`) by the value it stands for.
  void resolve_placeholders(json::value& value, std::string& path) {
    if (json::object* object = value.if_object()) {
      for (json::key_value_pair& member : *object) {
        const std::size_t size = path.size();
        append_pointer_key(path, member.key());
        resolve_placeholders(member.value(), path);
        path.resize(size);
      }
    } else if (json::array* array = value.if_array()) {
      for (std::size_t i = 0; i < array->size(); ++i) {
        const std::size_t size = path.size();
        append_pointer_index(path, i);
        resolve_placeholders((*array)[i], path);
        path.resize(size);
      }
    } else if (const json::string* string = value.if_string()) {
      const std::string text(*string);
      if (const auto collapsed = collapsed_path(text)) {
        REQUIRE(*collapsed == path);
        ++placeholders_;
        value = value_at(path, "json");
      } else if (const auto cut = cut_string_path(text)) {
        REQUIRE(*cut == path);
        ++placeholders_;
        value = value_at(path, "string");
      }
    }
  }

  // PATH of "[object of N keys: PATH]" (or "[object of N keys (KEY: M items): PATH]", KEY bare
  // or a JSON string) / "[array of N items: PATH]".
  static std::optional<std::string> collapsed_path(const std::string& text) {
    static const std::regex kCollapsed(
        R"(^\[(?:object of \d+ keys?(?: \((?:[\w.-]+|"(?:[^"\\]|\\.)*"): \d+ items?\))?)"
        R"(|array of \d+ items?): ([\s\S]*)\]$)");
    std::smatch match;
    if (!std::regex_match(text, match, kCollapsed)) return std::nullopt;
    return match[1].str();
  }

  // PATH of "prefix…[+N chars: PATH]".
  static std::optional<std::string> cut_string_path(const std::string& text) {
    const std::size_t mark = text.rfind("…[+");
    if (mark == std::string::npos || text.back() != ']') return std::nullopt;
    const std::size_t colon = text.find(" chars: ", mark);
    if (colon == std::string::npos) return std::nullopt;
    const std::size_t begin = colon + 8;
    return text.substr(begin, text.size() - begin - 1);
  }

  Fixture& fixture_;
  std::size_t page_budget_;
  std::optional<json::value> result_cursor_;
  std::size_t fetches_ = 0;
  std::size_t placeholders_ = 0;
  std::size_t projected_fields_ = 0;
};

}  // namespace ctxguard::pipeline::testing
