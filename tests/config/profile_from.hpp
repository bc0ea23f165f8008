#pragma once
// A Profile from YAML text, as if it were the configuration file (tests of every module that
// takes a profile).

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config_file.hpp"
#include "config/profile.hpp"

namespace ctxguard::config::testing {

inline ProfilePtr profile_from(std::string_view yaml) {
  ConfigSources sources;
  auto file = parse_config(yaml);
  if (!file) FAIL(file.error().messages.front());
  sources.file = *std::move(file);
  auto built = Profile::build(sources);
  if (!built) FAIL(built.error().messages.front());
  return *std::move(built);
}

}  // namespace ctxguard::config::testing
