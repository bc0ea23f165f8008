#pragma once
// Field projection: which records of an answer lose which fields when
// pagination and cutting long values are not enough. Records are the items of arrays of objects
// (and, in an answer without such arrays, its dominant object); the fields kept come from a
// per-tool map when one applies, otherwise from field_rank (identifiers, names, status, dates,
// amounts first; long text and nested blobs dropped first).

#include <cstddef>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "pipeline/fit/summarize.hpp"

namespace ctxguard::pipeline {

struct RecordGroup {
  const boost::json::array* array = nullptr;    // its shown object items are the records
  const boost::json::object* object = nullptr;  // or this one object is the record
  std::string path;                             // RFC 6901 pointer in the part
  std::vector<const boost::json::object*> records;
};

// What _ctxguard.projections says about one projected group.
struct Projection {
  std::string path;
  FieldList kept;
  FieldList omitted;
  std::size_t total_fields = 0;
  std::size_t group = 0;  // the index of its group in what plan_projections was given
  const boost::json::array* array = nullptr;    // the view's key for the group's fields
  const boost::json::object* object = nullptr;  // (one of the two)
  bool by_rule = false;                         // the tool's rule chose the fields
};

// The record groups of `root` (at `base_path`) as shown with `cuts` and `view`'s depth limit.
std::vector<RecordGroup> find_record_groups(const boost::json::value& root,
                                            const std::string& base_path, const CutMap& cuts,
                                            const ValueView& view);

// Projects groups, the costliest first, until about `excess` tokens are saved: with `rule`'s
// fields when the group's records have any of them, otherwise the most essential fields (at
// least `min_fields`). Adds the projections to `view` and returns what it did.
std::vector<Projection> plan_projections(const std::vector<RecordGroup>& groups, double excess,
                                         const FieldList* rule, std::size_t min_fields,
                                         ValueView& view);

}  // namespace ctxguard::pipeline
