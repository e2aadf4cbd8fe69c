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

// The table. Order: as `offload-build config` lists them.
constexpr std::array kSettings{
    Setting{"cache_dir", T::Path, "", "--cache-dir", "OFFLOAD_BUILD_CACHE_DIR", "cache_dir",
            "Cache directory (default: $XDG_CACHE_HOME/offload-build or ~/.cache/offload-build)"},
    Setting{"max_size", T::Size, "5G", "", "OFFLOAD_BUILD_MAX_SIZE", "cache_max_size",
            "Size the local cache is kept under (least recently used entries go first)"},
    Setting{"base_dir", T::Path, "", "--base-dir", "OFFLOAD_BUILD_BASE_DIR", "base_dir",
            "Absolute paths under this directory are keyed (and, in launcher mode, passed) "
            "relative to the working directory, as ccache's base_dir, so checkouts at other "
            "places share cache entries; kernel names are relative to it too"},
    Setting{"remote_storage", T::List, "", "--remote-storage", "OFFLOAD_BUILD_REMOTE_STORAGE",
            "remote_storage",
            "Remote storage after the local cache, in order: redis://..., redis+unix://..., "
            "http(s)://... with |attribute=value suffixes (docs/CACHE.md)"},
    Setting{"signing_key", T::Text, "", "", "OFFLOAD_BUILD_SIGNING_KEY", "",
            "Key that signs and verifies cache entries (HMAC-SHA256; environment only)", false,
            true},
    Setting{"signing_key_file", T::Path, "", "", "OFFLOAD_BUILD_SIGNING_KEY_FILE", "",
            "File holding the signing key (used when signing_key is not set)"},
    Setting{"cache_umask", T::Octal, "", "", "OFFLOAD_BUILD_CACHE_UMASK", "",
            "Umask for a cache shared by a group, e.g. 002 (default: a private cache)"},
    Setting{"no_cache", T::Flag, "false", "--no-cache", "OFFLOAD_BUILD_NO_CACHE", "",
            "Neither use nor fill the cache"},
    Setting{"explain", T::Flag, "false", "--explain", "OFFLOAD_BUILD_EXPLAIN", "",
            "Say for each job whether the cache served it, and for a miss which input changed"},
    Setting{"jobs", T::Count, "", "--jobs", "OFFLOAD_BUILD_JOBS", "",
            "Run up to N jobs at once (default: the number of CPUs)"},
    Setting{"two_parse", T::Flag, "false", "--two-parse", "OFFLOAD_BUILD_TWO_PARSE", "",
            "Compile C/C++ device passes with the driver's own --offload-device-only, each "
            "parsing the source for the host again, instead of sharing one host parse per "
            "source (the default where it gives the same bytes)"},
    Setting{"kernel_namespace", T::Text, "", "--kernel-namespace",
            "OFFLOAD_BUILD_KERNEL_NAMESPACE", "",
            "Launcher mode: a name (the project's) that keeps this project's OpenMP kernel names "
            "apart from another project's linked into the same program (a manifest build uses "
            "its \"name\")"},
    Setting{"prefix_command", T::Text, "", "--prefix-command", "OFFLOAD_BUILD_PREFIX_COMMAND", "",
            "Launcher mode, ccache's prefix_command: run compiles without offload through this "
            "command (distcc, icecc; words split on spaces), every offload job locally "
            "(docs/DISTRIBUTED.md)"},
    Setting{"remote_execution", T::Text, "", "--remote-execution", "OFFLOAD_BUILD_REMOTE_EXECUTION", "",
            "Run C/C++ compile jobs (device passes, host parse, host codegen) on a Remote Execution "
            "API v2 engine: grpc://HOST:PORT or grpcs://HOST:PORT with |instance=NAME, |jobs=N, "
            "|connect-timeout=, |call-timeout=, |execution-timeout=, |max-output-size=, "
            "|header=NAME:VALUE (docs/DISTRIBUTED.md)"},
    Setting{"disable", T::Flag, "false", "", "OFFLOAD_BUILD_DISABLE", "",
            "Launcher mode: run every command unchanged"},
    Setting{"stable_names", T::Flag, "true", "", "OFFLOAD_BUILD_STABLE_NAMES", "",
            "Give C/C++ OpenMP kernels names that do not depend on inodes (the preloaded "
            "libob-stable-names.so), so a fresh checkout hits the cache"},
    Setting{"system_dirs", T::Text, "/usr:/lib:/lib32:/lib64:/libx32", "",
            "OFFLOAD_BUILD_SYSTEM_DIRS", "",
            "Directories, separated by ':', whose files the cache keys by path, size and mtime "
            "instead of content"},
    Setting{"llvm", T::Path, "", "", "OFFLOAD_BUILD_LLVM", "",
            "LLVM installation to use when the manifest names no \"toolchain\" (default: "
            "found on PATH, then /usr/lib/llvm-22)"},
    Setting{"templates", T::Path, "", "", "OFFLOAD_BUILD_TEMPLATES", "",
            "Directory of `init` templates (default: next to the program, else the source tree)"},
    Setting{"verbose", T::Flag, "false", "--verbose", "OFFLOAD_BUILD_VERBOSE", "",
            "Print each command as it runs"},
    Setting{"quiet", T::Flag, "false", "--quiet", "OFFLOAD_BUILD_QUIET", "",
            "Print no progress and no summary: only errors (and what compilers print)"},
    Setting{"color", T::Choice, "auto", "--color", "OFFLOAD_BUILD_COLOR", "",
            "Color the summary and error:/warning: prefixes: auto (a terminal, unless NO_COLOR "
            "is set), always, never",
            true, false, "auto|always|never"},
    Setting{"trace", T::Path, "", "--trace", "OFFLOAD_BUILD_TRACE", "",
            "Write the build's jobs as Chrome trace events; launcher compiles add theirs to this "
            "file, so a whole make or ninja run is one trace (docs/TIMINGS.md)"},
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
    case T::Octal: {
      if (text.empty() || text.size() > 4) return bad();
      for (char c : text)
        if (c < '0' || c > '7') return bad();
      return {};
    }
    case T::Choice:
      for (const auto& c : util::split(std::string(s.choices), '|'))
        if (c == text) return {};
      return bad();
  }
  return {};
}

}  // namespace ob::config
