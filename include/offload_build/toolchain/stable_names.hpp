// Stable OpenMP kernel names (docs/CACHE.md): C/C++ compiles run with a small
// preloaded library (src/preload/ob_stable_names.c) that gives every file an
// identity made of its place under the base directory and its content, so a
// kernel's name no longer depends on the file's inode or on where the
// checkout lives. This file finds the library, decides whether the compiler
// honours it (a statically linked or setuid compiler ignores LD_PRELOAD: its
// compiles are then keyed on inodes, as before) and gives each compile its
// environment.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "offload_build/process/command.hpp"

namespace ob::toolchain {

namespace fs = std::filesystem;

// What kernel names are relative to (docs/CACHE.md): a file under one of
// `bases` is named by its real path relative to `anchor` (".." where it
// climbs out of it); any other file by its absolute real path.
struct NameRoots {
  std::vector<fs::path> bases;  // real paths; none: every name is absolute
  fs::path anchor;              // real path; empty: relative to the base a file lies under
  // OB_STABLE_ENV_BASE's value: the bases joined by ':' (one whose path holds
  // ':' left out: its files are named by absolute path).
  std::string bases_env() const;
};

struct StableNames {
  fs::path library;  // the preload library (absolute)
  NameRoots roots;
  // The compiler honours the library: its compiles are keyed on the stable
  // names' inputs instead of inodes. false: keyed on inodes, and why.
  bool keyed = true;
  std::string fallback;
  // The fallback is a fault to be said once per build (the compiler could not
  // load the library), not the compiler's nature (a static binary): -v only.
  bool warn() const { return !keyed && fallback.find("could not load") != std::string::npos; }

  // The environment of one compile whose translation unit has `salt`.
  std::vector<std::pair<std::string, std::optional<std::string>>> env(const std::string& salt) const;
};

// The preload library's environment and files (stable_names.h spells them;
// every stage outside toolchain/ and preload/ asks these):
// The record of lookups that found nothing, beside `depfile` (which the
// compile writes, or its temporary).
fs::path lookups_record(const fs::path& depfile);
// The record the library wrote at `file` (lookups_record): the absolute
// paths, once each, sorted. nullopt, with `why`, when it cannot be trusted:
// missing or without its header (no process loaded the library), without
// OB_LOOKUPS_WROTE (the process that wrote the depfile did not: a wrapper
// that drops LD_PRELOAD), or a path the library could not write. And the
// text of a record of `paths`, as the library writes one.
std::optional<std::vector<std::string>> read_lookups_record(const fs::path& file, std::string& why);
std::string lookups_record_text(const std::vector<std::string>& paths);
// The variable naming the depfile whose lookups are recorded (a per-build path).
bool is_lookups_variable(std::string_view name);
// The variable telling the library to record lookups only (no stable names).
bool is_lookups_only_variable(std::string_view name);
// The variable holding a translation unit's salt for its kernels' names
// (what a compile emits, never which files it reads).
bool is_salt_variable(std::string_view name);
// The variables that name places, not what a compile computes (the library's
// path, the base directories, the anchor, where lookups are recorded): keyed
// through the files they name, not by their text.
bool is_place_variable(std::string_view name);
// Record lookups for a compile writing `depfile`: the environment it needs
// (with `library` preloaded when the compile has no LD_PRELOAD yet).
void add_lookups_env(std::vector<std::pair<std::string, std::optional<std::string>>>& env, const fs::path& depfile,
                     const fs::path& library);
// A compile's environment made to record its lookups beside `depfile` instead
// (a dependency scan run for it): the record's path, or nullopt when it records none.
std::optional<fs::path> redirect_lookups(std::vector<std::pair<std::string, std::optional<std::string>>>& env,
                                         const fs::path& depfile);

// A file offload-build ships (the preload library, the Rust device stub): next
// to the program (build tree), or in <prefix>/lib/offload-build (installed).
// nullopt: not found.
std::optional<fs::path> find_support_file(const std::string& name);
std::optional<fs::path> find_stable_names_library();
// The library as LD_PRELOAD can name it (no space or ':' in its path); nullopt
// when it cannot be preloaded.
std::optional<fs::path> preload_library();
// LD_PRELOAD's value for a compile that loads `library`: it, then the user's own.
std::string preload_value(const fs::path& library);
// Why stable names are wanted but cannot be had (the library missing, out of
// this user's reach or unreadable): a warning said once per build, since the
// build is then keyed on inodes and shares no entry with builds that have it.
// Empty when usable; asked only when the stable_names setting is on.
std::string stable_names_unavailable();

// The salt of a project's compiles: a hash of its namespace (the manifest's
// name, --kernel-namespace), so two projects' files at the same relative
// path, linked into one program, get different names. Not the flags: a -D
// or -O change must not rename kernels (it would rerun every package, host
// codegen and link).
std::string kernel_salt(const std::string& kernel_namespace);

// Set up stable names for compiles by `compiler`: nullopt when the library is
// missing (the caller asks only when the stable_names setting is on; off,
// kernels are named after inodes, as plain clang names them). Whether the compiler honours the library is
// asked once (a 1-line compile) and remembered in `memo_dir` (the cache's
// probes/); without a memo directory it is assumed (nothing is cached then).
std::optional<StableNames> stable_names_for(const fs::path& compiler, const NameRoots& roots,
                                            const std::optional<fs::path>& memo_dir);

// The real path of a file as the preload library names it (ob_stable_name):
// relative to the anchor when under a base, else absolute.
std::string stable_name_path(const fs::path& real, const NameRoots& roots);

}  // namespace ob::toolchain
