// The one settings table: every setting offload-build has, with its type,
// default, command-line option, environment variable, manifest key and
// config-file key, and the line that documents it. The command line's
// options for settings, their --help lines and value checks
// (cli/options.cpp), docs/CONFIG.md and `offload-build config` are generated
// from it; the manifest schema is checked against it (tests).
//
// A new setting is one row in src/config/settings.cpp; the code that uses it
// reads it from the Config it is given (config.hpp), by key.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "offload_build/util/result.hpp"

namespace ob::config {

enum class Type {
  Path,     // a file or directory; relative ones are taken from where they were given
  Size,     // 5G, 500M, 1.5GiB (util::parse_size)
  Count,    // a positive whole number
  Flag,     // true/false (1/0, yes/no, on/off)
  Text,     // any text
  List,     // words separated by spaces; a higher source replaces the whole list
  Octal,    // an octal umask such as 002
  Choice,   // one of `choices`
};

// A row names only what its setting has, by field, in this order:
//   Setting{.key = "jobs", .type = Type::Count, .cli = "--jobs", .env = "OFFLOAD_BUILD_JOBS",
//           .doc = "...", .short_cli = "-j", .metavar = "N", .group = "Execution"},
struct Setting {
  std::string_view key = {};          // the config-file key and `config get KEY`
  Type type = Type::Text;
  std::string_view default_text = {}; // "" when unset by default (or computed: see `doc`)
  std::string_view cli = {};          // "--cache-dir", "" when none
  std::string_view env = {};          // "OFFLOAD_BUILD_CACHE_DIR", "" when none
  std::string_view manifest = {};     // "cache_dir" in offload.json, "" when none
  std::string_view doc = {};          // one line for help and docs
  bool in_file = true;           // may be set in a config file
  bool secret = false;           // never printed
  std::string_view choices = {}; // Choice: words separated by '|'
  // With `cli`: the option's one-letter name ("-j"), its value's name in
  // --help ("DIR"; none for a Flag) and its --help group.
  std::string_view short_cli = {};
  std::string_view metavar = {};
  std::string_view group = "Settings";
};

std::span<const Setting> table();
const Setting* find_setting(std::string_view key);
std::string_view type_name(Type type);

// `text` is a valid value of `setting` (the message names what is expected).
Result<void> check_value(const Setting& setting, std::string_view text);
// The table as Markdown, for docs/CONFIG.md (a test keeps the two equal;
// `offload-build config --markdown` prints it).
std::string markdown_table();

// 1/true/yes/on -> true; 0/false/no/off/"" -> false (checked by check_value).
bool flag_value(std::string_view text);
// An Octal umask's value (at most 0777); nullopt when it is not one: the one
// check, for check_value and for the cache that applies it.
std::optional<unsigned> umask_value(std::string_view text);
// A Size setting's default in bytes ("5G" in the table: written once).
uint64_t default_size(std::string_view key);

}  // namespace ob::config
