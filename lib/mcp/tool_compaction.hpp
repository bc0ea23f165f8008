#pragma once
// `toolList: compact` (docs/protocol.md 4.2): each of the server's tools written shorter and
// still the same tool. A tool keeps its name, its annotations, every input property and its
// `required`; an input schema accepts and rejects exactly the arguments it did. What goes:
//   - `$comment` in any schema, and `title` where it only repeats the name it stands under (the
//     property's, the definition's, or at the root the tool's, with an "Arguments"-like suffix);
//     names are compared lowercase with everything but letters and digits left out, so
//     "Page Size" repeats "page_size";
//   - `$schema` at the root, when the schema means the same under MCP's default dialect
//     (JSON Schema 2020-12): it names 2020-12, or an older draft and uses no keyword whose
//     meaning changed since (array `items`, `additionalItems`, `dependencies`, boolean
//     `exclusiveMinimum`/`exclusiveMaximum`, `$recursiveRef`/`$recursiveAnchor`, `id`, a `$ref`
//     with validation keywords beside it);
//   - entries of the root `definitions` / `$defs` that no `$ref` reaches, when every `$ref` is
//     such a local pointer and nothing declares an `$id` or an anchor;
//   - in the tool's description, the sentences said once for all tools elsewhere, and the
//     sentences past kDescriptionChars characters (the first always stays); a shortened
//     description ends with kShortenedMark, and ctxguard_fetch {"tool": NAME} gives it whole;
//   - the description of an input property that many tools describe alike, said once elsewhere.
// Values under `enum`, `const`, `default` and `examples` are data, never touched.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace ctxguard::mcp {

inline constexpr std::size_t kDescriptionChars = 200;
inline constexpr std::string_view kShortenedMark = " …";

// A sentence in this many tools' descriptions or more may be shared guidance (shared_sentences).
inline constexpr std::size_t kSharedSentenceTools = 3;
inline constexpr std::size_t kSharedSentenceChars = 24;

// An input property's description shorter than this is said where it stands.
inline constexpr std::size_t kSharedParameterChars = 12;

// What compaction removed from one tool.
struct Compaction {
  std::size_t keywords_removed = 0;     // $schema, $comment, titles repeating a name
  std::size_t definitions_removed = 0;  // definitions no $ref reaches
  std::size_t shared_removed = 0;       // sentences said once for all tools
  std::size_t parameters_removed = 0;   // property descriptions said once for all tools
  bool description_shortened = false;   // sentences past kDescriptionChars left out
};

// An input property described alike by many tools.
struct SharedParameter {
  std::string name;
  std::string description;

  friend bool operator==(const SharedParameter&, const SharedParameter&) = default;
};

// `text` split into sentences, each with the blank space after it: a sentence ends at '.', '!'
// or '?' (and any closing quote or bracket) followed by white space, or at a blank line.
// Joining the pieces gives `text` back.
std::vector<std::string_view> split_sentences(std::string_view text);

// The sentences (trimmed) that stand in the descriptions of at least kSharedSentenceTools of
// `tools` and at least half of them, and are kSharedSentenceChars long or longer, in the order
// they first appear. A sentence in a few of many tools is about those tools, and a short one
// ("Read-only.") is about its tool: neither is guidance for the whole server.
std::vector<std::string> shared_sentences(const boost::json::array& tools);

// The top-level input properties that at least kSharedSentenceTools of `tools` describe with the
// same description of kSharedParameterChars or more, and no tool describes otherwise, in the
// order they first appear. Unlike a
// sentence, a property's description is about the property wherever it stands: no share of the
// tools is asked for (SaaS servers repeat `owner`, `repo`, `perPage` on a third of their tools).
std::vector<SharedParameter> shared_parameters(const boost::json::array& tools);

// Compacts `schema`, the input schema of the tool named `tool_name`, in place.
Compaction compact_input_schema(boost::json::object& schema, std::string_view tool_name);

struct CompactDescription {
  std::string text;
  std::size_t shared_removed = 0;  // sentences of `shared` left out
  bool shortened = false;          // sentences past kDescriptionChars left out
};

// `description` without the `shared` sentences, and without the sentences after the one that
// reaches kDescriptionChars characters (code points); a first sentence over twice that is cut at
// a space within kDescriptionChars (or there, when it has none).
CompactDescription compact_description(std::string_view description,
                                       std::span<const std::string> shared);

// Compacts one tool definition in place: its input schema (with the descriptions of `parameters`
// left out where they stand alike) and its description.
Compaction compact_tool(boost::json::object& tool, std::span<const std::string> shared,
                        std::span<const SharedParameter> parameters = {});

}  // namespace ctxguard::mcp
