#pragma once
// The two formats of clients' configuration files, behind one face (config_edit.cpp edits either
// the same way): a file read, its servers in its order, where each launch stands in its text, and
// what it means once launches are written into it. JSON with comments through Boost.JSON and
// jsonc_spans; TOML through toml++ and its source regions.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>
#include <boost/json/value.hpp>

#include "wrap/client_files.hpp"
#include "wrap/jsonc_spans.hpp"
#include "wrap/server_launch.hpp"
#include "wrap/text_edit.hpp"

namespace ctxguard::wrap {

// One server as the file holds it, read the same way from JSON and TOML.
struct Entry {
  std::string name;
  std::optional<Launch> launch;  // a stdio server this understands
  std::string url;               // a remote one
};

class JsonConfig {
 public:
  // `text` read with `layout` (its servers under `servers`, else `mcpServers`, when the layout
  // names none), or why it cannot be used: one line.
  static Checked<JsonConfig> read(std::string_view text, const ConfigLayout& layout);

  const std::string& servers_key() const { return servers_key_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // Where entry `index`'s launch stands in `text`, the text read; nullopt when it is not found.
  std::optional<LaunchText> launch_text(std::string_view text, std::size_t index) const;
  bool has_args(std::string_view name) const;
  void write_launch(std::size_t index, const Launch& launch, bool keep_args);
  bool means_the_same(const JsonConfig& other) const { return root_ == other.root_; }

  static std::string write_string(std::string_view value, std::string_view like);
  static bool has_comments(std::string_view text);

 private:
  boost::json::object* servers();
  const boost::json::object* servers() const;

  boost::json::value root_;
  std::string servers_key_;
  std::vector<Entry> entries_;
  std::optional<JsonSpans> spans_;
};

class TomlConfig {
 public:
  static Checked<TomlConfig> read(std::string_view text, const ConfigLayout& layout);

  const std::string& servers_key() const { return servers_key_; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::optional<LaunchText> launch_text(std::string_view text, std::size_t index) const;
  bool has_args(std::string_view name) const;
  void write_launch(std::size_t index, const Launch& launch, bool keep_args);
  bool means_the_same(const TomlConfig& other) const { return root_ == other.root_; }

  static std::string write_string(std::string_view value, std::string_view like);
  static bool has_comments(std::string_view text);

 private:
  const toml::table* server(std::string_view name) const;
  toml::table* server(std::string_view name);

  toml::table root_;
  std::string servers_key_;
  std::vector<Entry> entries_;
};

}  // namespace ctxguard::wrap
