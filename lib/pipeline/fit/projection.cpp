#include "pipeline/fit/projection.hpp"

#include <algorithm>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/field_rank.hpp"
#include "support/json_pointer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

struct GroupFinder {
  const CutMap& cuts;
  const ValueView& view;
  std::vector<RecordGroup> groups;

  void visit(const json::value& value, std::string& path, Nesting nesting) {
    if (collapses(value, view, nesting) && collapsed_text(value, path)) return;
    if (const json::array* array = value.if_array()) {
      const auto cut = cuts.find(array);
      const ItemWindow window = cut != cuts.end() ? cut->second : ItemWindow{0, array->size()};
      std::size_t objects = 0;
      for (std::size_t i = window.begin; i < window.begin + window.count; ++i) {
        if ((*array)[i].is_object()) ++objects;
      }
      if (objects > 0 && objects * 2 >= window.count) {
        RecordGroup group;
        group.array = array;
        group.path = path;
        for (std::size_t i = window.begin; i < window.begin + window.count; ++i) {
          if (const json::object* object = (*array)[i].if_object()) group.records.push_back(object);
        }
        groups.push_back(std::move(group));
        return;
      }
      const std::size_t size = path.size();
      for (std::size_t i = window.begin; i < window.begin + window.count; ++i) {
        append_pointer_index(path, i);
        visit((*array)[i], path, nesting.in_array());
        path.resize(size);
      }
    } else if (const json::object* object = value.if_object()) {
      const std::size_t size = path.size();
      for (const json::key_value_pair& member : *object) {
        append_pointer_key(path, member.key());
        visit(member.value(), path, nesting.in_object());
        path.resize(size);
      }
    }
  }
};

// The object holding most of `root`: descend while one member object carries over half.
void add_dominant_object(const json::value& root, const std::string& base_path,
                         std::vector<RecordGroup>& groups) {
  if (!root.is_object()) return;
  const json::value* current = &root;
  std::string path = base_path;
  for (;;) {
    const std::size_t whole = budget::estimate_json_tokens(*current);
    const json::key_value_pair* heaviest = nullptr;
    std::size_t heaviest_tokens = 0;
    for (const json::key_value_pair& member : current->get_object()) {
      const std::size_t tokens = budget::estimate_json_tokens(member.value());
      if (tokens > heaviest_tokens) {
        heaviest_tokens = tokens;
        heaviest = &member;
      }
    }
    if (heaviest == nullptr || !heaviest->value().is_object() || heaviest_tokens * 2 < whole) break;
    append_pointer_key(path, heaviest->key());
    current = &heaviest->value();
  }
  const json::object* object = &current->get_object();
  groups.push_back(
      RecordGroup{.array = nullptr, .object = object, .path = path, .records = {object}});
}

bool rule_applies(const FieldList& rule, const std::vector<const json::object*>& records) {
  for (const std::string& field : rule) {
    const std::string_view head = std::string_view(field).substr(0, field.find('.'));
    for (const json::object* record : records) {
      if (record->contains(head)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<RecordGroup> find_record_groups(const json::value& root, const std::string& base_path,
                                            const CutMap& cuts, const ValueView& view) {
  GroupFinder finder{cuts, view, {}};
  std::string path = base_path;
  finder.visit(root, path, Nesting{});
  if (finder.groups.empty()) add_dominant_object(root, base_path, finder.groups);
  return std::move(finder.groups);
}

std::vector<Projection> plan_projections(const std::vector<RecordGroup>& groups, double excess,
                                         const FieldList* rule, std::size_t min_fields,
                                         ValueView& view) {
  struct Ranked {
    const RecordGroup* group;
    std::vector<FieldStat> fields;
    double tokens = 0;
  };
  std::vector<Ranked> ranked;
  for (const RecordGroup& group : groups) {
    Ranked entry{&group, rank_fields(group.records, view.max_string_chars), 0};
    for (const FieldStat& field : entry.fields) entry.tokens += field.tokens;
    if (entry.fields.size() > 1) ranked.push_back(std::move(entry));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& a, const Ranked& b) { return a.tokens > b.tokens; });

  std::vector<Projection> done;
  for (const Ranked& entry : ranked) {
    if (excess <= 0) break;
    Projection projection;
    projection.path = entry.group->path;
    projection.total_fields = entry.fields.size();
    projection.group = static_cast<std::size_t>(entry.group - groups.data());
    projection.array = entry.group->array;
    projection.object = entry.group->array == nullptr ? entry.group->object : nullptr;
    if (rule != nullptr && rule_applies(*rule, entry.group->records)) {
      projection.by_rule = true;
      projection.kept = *rule;
      double saved = 0;
      FieldList sub;
      for (const FieldStat& field : entry.fields) {
        if (field_use(*rule, field.key, sub) == FieldUse::kDrop) {
          projection.omitted.push_back(field.key);
          saved += field.tokens;
        }
      }
      excess -= saved;
    } else {
      std::size_t keep = entry.fields.size();
      const std::size_t floor = std::min(min_fields, entry.fields.size());
      while (keep > floor && excess > 0) {
        --keep;
        excess -= entry.fields[keep].tokens;
      }
      for (std::size_t i = 0; i < entry.fields.size(); ++i) {
        (i < keep ? projection.kept : projection.omitted).push_back(entry.fields[i].key);
      }
    }
    if (projection.omitted.empty()) continue;
    if (entry.group->array != nullptr) {
      view.item_fields[entry.group->array] = projection.kept;
    } else {
      view.object_fields[entry.group->object] = projection.kept;
    }
    done.push_back(std::move(projection));
  }
  return done;
}

}  // namespace ctxguard::pipeline
