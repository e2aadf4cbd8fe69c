#include "offload_build/config/settings.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fmt/format.h>

#include "offload_build/util/size_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::config {

namespace {

using T = Type;

// The table. Order: as `offload-build config` lists them. A row names only
// what its setting has; the fields are in Setting's order (settings.hpp).
constexpr std::array kSettings{
    Setting{.key = "cache_dir", .type = T::Path, .cli = "--cache-dir", .env = "OFFLOAD_BUILD_CACHE_DIR",
            .manifest = "cache_dir",
            .doc = "Cache directory (default: $XDG_CACHE_HOME/offload-build or ~/.cache/offload-build)",
            .metavar = "DIR", .group = "Cache"},
    Setting{.key = "max_size", .type = T::Size, .default_text = "5G", .env = "OFFLOAD_BUILD_MAX_SIZE",
            .manifest = "cache_max_size",
            .doc = "Size the local cache is kept under (least recently used entries go first)"},
    Setting{.key = "base_dir", .type = T::Path, .cli = "--base-dir", .env = "OFFLOAD_BUILD_BASE_DIR",
            .manifest = "base_dir",
            .doc = "Absolute paths under this directory are keyed (and, in launcher mode, passed) "
                   "relative to the working directory, as ccache's base_dir, so checkouts at other "
                   "places share cache entries; kernel names are relative to it too",
            .metavar = "DIR", .group = "Cache"},
    Setting{.key = "remote_storage", .type = T::List, .cli = "--remote-storage",
            .env = "OFFLOAD_BUILD_REMOTE_STORAGE", .manifest = "remote_storage",
            .doc = "Remote storage after the local cache, in order: redis://..., redis+unix://..., "
                   "http(s)://... with |attribute=value suffixes (docs/CACHE.md)",
            .metavar = "URL", .group = "Cache"},
    Setting{.key = "signing_key", .type = T::Text, .env = "OFFLOAD_BUILD_SIGNING_KEY",
            .doc = "Key that signs and verifies cache entries (HMAC-SHA256; environment only)",
            .in_file = false, .secret = true},
    Setting{.key = "signing_key_file", .type = T::Path, .env = "OFFLOAD_BUILD_SIGNING_KEY_FILE",
            .doc = "File holding the signing key (used when signing_key is not set)"},
    Setting{.key = "cache_umask", .type = T::Octal, .env = "OFFLOAD_BUILD_CACHE_UMASK",
            .doc = "Umask for a cache shared by a group, e.g. 002 (default: a private cache)"},
    Setting{.key = "no_cache", .type = T::Flag, .default_text = "false", .cli = "--no-cache",
            .env = "OFFLOAD_BUILD_NO_CACHE", .doc = "Neither use nor fill the cache", .group = "Cache"},
    Setting{.key = "explain", .type = T::Flag, .default_text = "false", .cli = "--explain",
            .env = "OFFLOAD_BUILD_EXPLAIN",
            .doc = "Say for each job whether the cache served it, and for a miss which input changed",
            .group = "Cache"},
    Setting{.key = "jobs", .type = T::Count, .cli = "--jobs", .env = "OFFLOAD_BUILD_JOBS",
            .doc = "Run up to N jobs at once (default: the number of CPUs)", .short_cli = "-j",
            .metavar = "N", .group = "Execution"},
    Setting{.key = "two_parse", .type = T::Flag, .default_text = "false", .cli = "--two-parse",
            .env = "OFFLOAD_BUILD_TWO_PARSE",
            .doc = "Compile C/C++ device passes with the driver's own --offload-device-only, each "
                   "parsing the source for the host again, instead of sharing one host parse per "
                   "source (the default where it gives the same bytes)",
            .group = "Project"},
    Setting{.key = "kernel_namespace", .type = T::Text, .cli = "--kernel-namespace",
            .env = "OFFLOAD_BUILD_KERNEL_NAMESPACE",
            .doc = "Launcher mode: a name (the project's) that keeps this project's OpenMP kernel names "
                   "apart from another project's linked into the same program (a manifest build uses "
                   "its \"name\")",
            .metavar = "NAME", .group = "Cache"},
    Setting{.key = "prefix_command", .type = T::Text, .cli = "--prefix-command",
            .env = "OFFLOAD_BUILD_PREFIX_COMMAND",
            .doc = "Launcher mode, ccache's prefix_command: run compiles without offload through this "
                   "command (distcc, icecc; words split on spaces), every offload job locally "
                   "(docs/DISTRIBUTED.md)",
            .metavar = "CMD", .group = "Execution"},
    Setting{.key = "remote_execution", .type = T::Text, .cli = "--remote-execution",
            .env = "OFFLOAD_BUILD_REMOTE_EXECUTION",
            .doc = "Run C/C++ compile jobs (device passes, host parse, host codegen) on a Remote Execution "
                   "API v2 engine: grpc://HOST:PORT or grpcs://HOST:PORT with |instance=NAME, |jobs=N, "
                   "|connect-timeout=, |call-timeout=, |execution-timeout=, |max-output-size=, "
                   "|header=NAME:VALUE (docs/DISTRIBUTED.md)",
            .metavar = "URL", .group = "Execution"},
    Setting{.key = "engine_cache", .type = T::Choice, .default_text = "use", .cli = "--engine-cache",
            .env = "OFFLOAD_BUILD_ENGINE_CACHE",
            .doc = "Whom remote execution's action cache is trusted as: use (its results serve this "
                   "build and the local cache, never remote storage), trusted (stored everywhere, signed: "
                   "only an engine whose action cache no other client can write), execute (never asked; "
                   "every compile executes), off (executed with do_not_cache: neither read nor written) "
                   "(docs/CACHE.md)",
            .choices = "use|trusted|execute|off", .metavar = "HOW", .group = "Execution"},
    Setting{.key = "engine_storage", .type = T::Flag, .default_text = "true",
            .env = "OFFLOAD_BUILD_ENGINE_STORAGE",
            .doc = "With remote_execution and engine_cache use or trusted: keep every entry of the local cache "
                   "in the engine's action cache too, as a remote storage layer (a fresh checkout, its packages "
                   "and links included, served by the engine as by Redis) (docs/DISTRIBUTED.md)",
            .group = "Execution"},
    Setting{.key = "disable", .type = T::Flag, .default_text = "false", .env = "OFFLOAD_BUILD_DISABLE",
            .doc = "Launcher mode: run every command unchanged"},
    Setting{.key = "stable_names", .type = T::Flag, .default_text = "true", .env = "OFFLOAD_BUILD_STABLE_NAMES",
            .doc = "Give C/C++ OpenMP kernels names that do not depend on inodes (the preloaded "
                   "libob-stable-names.so), so a fresh checkout hits the cache"},
    Setting{.key = "system_dirs", .type = T::Text, .default_text = "/usr:/lib:/lib32:/lib64:/libx32",
            .env = "OFFLOAD_BUILD_SYSTEM_DIRS",
            .doc = "Directories, separated by ':', whose files the cache keys by path, size and mtime "
                   "instead of content"},
    Setting{.key = "llvm", .type = T::Path, .env = "OFFLOAD_BUILD_LLVM",
            .doc = "LLVM installation to use when the manifest names no \"toolchain\" (default: "
                   "found on PATH, then /usr/lib/llvm-22)"},
    Setting{.key = "templates", .type = T::Path, .env = "OFFLOAD_BUILD_TEMPLATES",
            .doc = "Directory of `init` templates (default: next to the program, else the source tree)"},
    Setting{.key = "verbose", .type = T::Flag, .default_text = "false", .cli = "--verbose",
            .env = "OFFLOAD_BUILD_VERBOSE", .doc = "Print each command as it runs", .short_cli = "-v",
            .group = "Output"},
    Setting{.key = "quiet", .type = T::Flag, .default_text = "false", .cli = "--quiet",
            .env = "OFFLOAD_BUILD_QUIET",
            .doc = "Print no progress and no summary: only errors (and what compilers print)",
            .short_cli = "-q", .group = "Output"},
    Setting{.key = "color", .type = T::Choice, .default_text = "auto", .cli = "--color",
            .env = "OFFLOAD_BUILD_COLOR",
            .doc = "Color the summary and error:/warning: prefixes: auto (a terminal, unless NO_COLOR "
                   "is set), always, never",
            .choices = "auto|always|never", .metavar = "WHEN", .group = "Output"},
    Setting{.key = "trace", .type = T::Path, .cli = "--trace", .env = "OFFLOAD_BUILD_TRACE",
            .doc = "Write the build's jobs as Chrome trace events; launcher compiles add theirs to this "
                   "file, so a whole make or ninja run is one trace (docs/TIMINGS.md)",
            .metavar = "FILE", .group = "Output"},
    Setting{.key = "test_hook_internal_error", .type = T::Flag, .default_text = "false",
            .env = "OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR",
            .doc = "For tests only: a launcher compile fails inside offload-build, to show that the "
                   "compiler then runs unchanged"},
};

std::string expected(const Setting& s) {
  switch (s.type) {
    case T::Path: return "a path";
    case T::Size: return "a size such as 500M or 5G";
    case T::Count: return "a whole number of at least 1";
    case T::Flag: return "true or false";
    case T::Text: return "text";
    case T::List: return "words separated by spaces";
    case T::Octal: return "an octal umask such as 002";
    case T::Choice: return "one of " + util::join(util::split(std::string(s.choices), '|'), ", ");
  }
  return "";
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::span<const Setting> table() { return kSettings; }

const Setting* find_setting(std::string_view key) {
  for (const auto& s : kSettings)
    if (s.key == key) return &s;
  return nullptr;
}

std::string_view type_name(Type type) {
  switch (type) {
    case T::Path: return "path";
    case T::Size: return "size";
    case T::Count: return "count";
    case T::Flag: return "flag";
    case T::Text: return "text";
    case T::List: return "list";
    case T::Octal: return "octal";
    case T::Choice: return "choice";
  }
  return "";
}

std::string markdown_table() {
  auto code = [](std::string_view s) { return s.empty() ? std::string("-") : fmt::format("`{}`", s); };
  std::string out =
      "| setting | type | default | option | environment | offload.json | what it does |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const auto& s : kSettings) {
    std::string doc(s.doc);
    for (size_t i = 0; (i = doc.find('|', i)) != std::string::npos; i += 2) doc.replace(i, 1, "\\|");
    if (!s.in_file) doc += " Not in a config file.";
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", s.key, type_name(s.type),
                       code(s.default_text), code(s.cli), code(s.env), code(s.manifest), doc);
  }
  return out;
}

bool flag_value(std::string_view text) {
  const std::string l = lower(text);
  return l == "1" || l == "true" || l == "yes" || l == "on";
}

std::optional<unsigned> umask_value(std::string_view text) {
  if (text.empty()) return std::nullopt;
  unsigned v = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return std::nullopt;
    v = v * 8 + static_cast<unsigned>(c - '0');
    if (v > 0777) return std::nullopt;
  }
  return v;
}

uint64_t default_size(std::string_view key) {
  const Setting* s = find_setting(key);
  auto bytes = s && s->type == T::Size ? util::parse_size(s->default_text) : Result<uint64_t>(uint64_t{0});
  return bytes ? *bytes : 0;
}

Result<void> check_value(const Setting& s, std::string_view text) {
  auto bad = [&](std::string why = {}) {
    return Error::usage(fmt::format("{} is {}, not '{}'{}", s.key, expected(s),
                                    s.secret ? "(hidden)" : util::shorten(std::string(text), 80),
                                    why.empty() ? "" : " (" + why + ")"));
  };
  switch (s.type) {
    case T::Path:
    case T::Text:
    case T::List: return {};
    case T::Size: {
      auto r = util::parse_size(text);
      if (!r) return Error::usage(fmt::format("{}: {}", s.key, r.error().message));
      return {};
    }
    case T::Count: {
      unsigned long n = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec != std::errc() || end != text.data() + text.size() || n == 0) return bad();
      return {};
    }
    case T::Flag: {
      const std::string l = lower(text);
      for (std::string_view ok : {"1", "true", "yes", "on", "0", "false", "no", "off", ""})
        if (l == ok) return {};
      return bad();
    }
    case T::Octal:
      if (!umask_value(text)) return bad();
      return {};
    case T::Choice:
      for (const auto& c : util::split(std::string(s.choices), '|'))
        if (c == text) return {};
      return bad();
  }
  return {};
}

}  // namespace ob::config
