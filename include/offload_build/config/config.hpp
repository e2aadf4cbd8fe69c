// The configuration in force: for each setting of the table, the value from
// the highest source that has one, and where it came from. One precedence
// for every setting:
//   command line > environment > project manifest > user config file
//   ($XDG_CONFIG_HOME/offload-build/config) > system config file
//   (/etc/offload-build.conf) > default.
// The config files are plain `key = value` lines, like ccache.conf.
// This module is the only reader of the process environment (`env`).
// There is no process-wide configuration: the CLI resolves one Config per
// command (run/request.hpp: resolve_settings) and carries it in run::Session; the stages
// below get the values they need, or a const Config&.
#pragma once

#include <array>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/config/settings.hpp"
#include "offload_build/util/result.hpp"

namespace ob::config {

namespace fs = std::filesystem;

// Highest precedence first.
enum class Origin { CommandLine, Environment, Manifest, UserFile, SystemFile, Default };
inline constexpr size_t kOrigins = 6;
std::string_view origin_name(Origin origin);  // "command line", "environment", ...

struct Value {
  std::string text;   // as given (a list: its words joined by one space)
  Origin origin = Origin::Default;
  std::string where;  // "--cache-dir", "OFFLOAD_BUILD_CACHE_DIR", "offload.json:4:3", "FILE:2"
};

// The one reader of the process environment; nullopt when unset. Settings
// are read through Config (their variables are table rows); this is for the
// environment of others (PATH, HOME, TERM, MAKEFLAGS, RUSTFLAGS, ...).
std::optional<std::string> env(const char* name);
// The same as a C string (nullptr when unset), valid until the variable changes.
const char* env_or_null(const char* name);
// Every variable whose name starts with one of `prefixes`, as NAME=VALUE,
// sorted (the variables another tool reads: cargo's CARGO_*, rustup's RUSTUP_*).
std::vector<std::string> env_with_prefixes(std::initializer_list<std::string_view> prefixes);
// The names of every variable read through env/env_or_null so far (sorted):
// what a no-op build's record checks again (cache/noop_record.hpp).
std::vector<std::string> env_names_read();

class Config {
 public:
  // Record `text` for `key` from `origin` (keys not in the table are ignored).
  void set(std::string_view key, std::string text, Origin origin, std::string where);
  // The value in force: the highest source that has one; nullptr when none
  // (and no default).
  const Value* get(std::string_view key) const;
  // The same with the project manifest's value (`manifest`, from `where`)
  // taking its place between the environment and the user config file.
  std::optional<Value> get(std::string_view key, const std::optional<std::string>& manifest,
                           std::string_view where) const;
  // Typed views of get(key): empty/false/0/nullopt when unset. `key` must be
  // a row of the table (std::logic_error otherwise: a misspelt key in code).
  std::string text(std::string_view key) const;
  bool flag(std::string_view key) const;
  size_t count(std::string_view key) const;     // a Count
  uint64_t size(std::string_view key) const;    // a Size, in bytes
  std::optional<fs::path> path(std::string_view key) const;  // a Path; nullopt when unset or empty
  // Every value recorded for `key`, highest first (what `config` shows as
  // overridden).
  std::vector<Value> all(std::string_view key) const;

 private:
  std::map<std::string, std::array<std::optional<Value>, kOrigins>, std::less<>> values_;
};

// Where the config files are: $OFFLOAD_BUILD_CONFIG (a file) or
// $XDG_CONFIG_HOME/offload-build/config or ~/.config/offload-build/config;
// $OFFLOAD_BUILD_SYSTEM_CONFIG or /etc/offload-build.conf.
fs::path user_config_file();
fs::path system_config_file();

struct FileLine {
  std::string key, value;
  size_t line = 0;
};
// A config file's settings; a missing file has none. Errors name FILE:LINE:
// a line that is not `key = value`, an unknown key (with the closest one), a
// setting the file may not hold, a value of the wrong type.
Result<std::vector<FileLine>> read_config_file(const fs::path& file);
// Set (or, with nullopt, remove) `key` in `file`, keeping its other lines and
// comments; the file is replaced atomically.
Result<void> write_config_file(const fs::path& file, std::string_view key,
                               const std::optional<std::string>& value);

// Defaults, both config files and the environment added to `given` (the
// command line's values; the manifest is added by its reader). An error for
// a bad file or variable.
Result<Config> load(Config given = {});
// The table's defaults only (what a test or tool without a command line uses).
Config defaults();

}  // namespace ob::config
