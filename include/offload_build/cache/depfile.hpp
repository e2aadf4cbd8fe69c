// Make-style depfiles (clang -MD, rustc --emit=dep-info, ld --dependency-file).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ob::cache {

// The prerequisites of every rule in `text`, in order, without duplicates.
// Handles line continuations, escaped spaces ("\ ") and "$$".
std::vector<std::string> parse_depfile(std::string_view text);

// The environment variables rustc's dep-info says were read (`# env-dep:NAME`
// or `# env-dep:NAME=VALUE` lines), by name, in order, without duplicates.
std::vector<std::string> parse_env_deps(std::string_view text);

// A Dep (job_key.hpp) of an environment variable is named this prefix + its
// name; FileFactsCache::get gives its value's digest as the "content".
inline constexpr std::string_view kEnvDepPrefix = "env:";
// A Dep of a program a job ran (its compiler, its tools, the preload library)
// is named this prefix + its path; FileFactsCache::get identifies it as
// programs are everywhere (path, size and mtime, as tool_identity does), not
// by reading it: a compiler outside the system directories is 100 MB.
inline constexpr std::string_view kProgramDepPrefix = "program:";

}  // namespace ob::cache
