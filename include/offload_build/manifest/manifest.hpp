// The project manifest (offload.json): parsed, validated and resolved.
// Every path in a Manifest is absolute, so later stages never re-resolve.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/result.hpp"

namespace ob::manifest {

namespace fs = std::filesystem;

enum class Language { C, Cxx, Fortran, Rust };

std::string_view language_name(Language lang);  // "c", "c++", "fortran", "rust"

struct SourceFile {
  fs::path path;  // absolute
  Language language = Language::C;
};

struct Manifest {
  fs::path file;         // absolute path of offload.json
  fs::path project_dir;  // directory holding it; commands run here
  std::string name;
  std::string output;    // program file name
  fs::path build_dir;    // absolute; default project_dir/build
  std::vector<SourceFile> sources;  // globs expanded, sorted, deduplicated
  std::vector<fs::path> glob_dirs;  // the directories the globs looked into (sorted, unique)
  std::vector<Target> targets;      // resolved, deduplicated, in manifest order
  std::vector<std::string> include_dirs;  // as written (relative to project_dir)
  std::vector<std::string> defines;       // NAME or NAME=VALUE, without -D
  std::vector<std::string> flags;         // every compile (device and host)
  std::vector<std::string> host_flags;    // host compiles only
  std::vector<std::string> device_flags;  // device compiles only
  std::vector<std::string> link_flags;    // the final link
  std::vector<std::string> libs;          // -l names (without -l) or paths
  std::optional<fs::path> toolchain;      // LLVM root, absolute
  std::optional<fs::path> rustc;          // "toolchain": {"rustc": ...}, absolute (Rust)
  std::string device_cfg = "offload_device";  // Rust: the cfg only the device pass sets
  std::optional<fs::path> cache_dir;      // absolute; else the default cache location
  std::optional<fs::path> base_dir;       // absolute: "base_dir" (cache keys, kernel names)
  std::optional<uint64_t> cache_max_size; // bytes
  std::vector<std::string> remote_storage; // remote storage URLs (docs/CACHE.md), as written
  // The program's link: "lld" (LLVM's, when the toolchain has it: the
  // default) or "system" (the compiler's default, GNU ld on Debian).
  enum class Linker { Lld, System };
  Linker linker = Linker::Lld;
  bool cache_time_macros = false;         // cache sources that use __DATE__/__TIME__

  fs::path program_path() const { return build_dir / output; }
  // A Rust crate: then `sources` holds exactly its crate root.
  bool is_rust() const { return !sources.empty() && sources.front().language == Language::Rust; }
};

// The largest manifest load_manifest reads (docs/MANIFEST.md).
inline constexpr uint64_t kMaxManifestSize = uint64_t{16} << 20;  // 16 MiB

// What the stages above check a manifest with, passed down: the manifest
// stage knows no compiler option spellings (the frontends do; the callers
// pass frontend::manifest_options()).
struct ManifestOptions {
  // A problem in one of the option lists ("flags", "host_flags", "defines",
  // ...): the index of the entry refused and the message; nullopt when none.
  // Reported at that entry's line:column.
  using ListCheck = std::function<std::optional<std::pair<size_t, std::string>>(
      const std::string& key, const std::vector<std::string>& values)>;
  ListCheck check_list;
};

// Read, validate and resolve `file`. Errors are usage errors (exit 2) of the form
//   path/offload.json:LINE:COL: error: WHAT; accepted: ...  [did you mean "X"?]
// A file that is not a regular one (a device, a FIFO: a symlink to /dev/zero)
// or is larger than kMaxManifestSize is refused at once, unread.
Result<Manifest> load_manifest(const fs::path& file, const ManifestOptions& options);

// Same, from text (for tests); `file` is used for messages and relative paths.
Result<Manifest> parse_manifest(const std::string& text, const fs::path& file,
                                const ManifestOptions& options);

// Replace the manifest's targets with spellings from the command line (--target).
// Each spelling may hold several targets separated by commas ("host,sm_90");
// duplicates are dropped. Errors name the option: `--target sm9: unknown offload
// target "sm9"; did you mean "sm_90"? ...`. An empty list changes nothing.
Result<void> override_targets(Manifest& manifest, const std::vector<std::string>& spellings);

// The pieces below are used by load_manifest and exposed for tests and other
// stages. Their errors are usage errors without a location; callers add it.

// .c is C; .cpp .cc .cxx .C .c++ are C++; .f90 .F90 .f .F .for .f95 .f03 .f08
// are Fortran; .rs is Rust; anything else has no language.
std::optional<Language> language_from_extension(const fs::path& file);
// The language of a source file (absolute) from its extension, or an error naming
// it relative to `project_dir` (Fortran sources: "not supported yet").
Result<Language> language_for_source(const fs::path& file, const fs::path& project_dir);
// The manifest's "language": "c", "c++" or "cxx", "fortran", "rust".
Result<Language> parse_language(std::string_view name);
// Expand one "sources" entry relative to `base`: a literal path that must name an
// existing file, or a glob (`*`, `?`, `[...]` within a name, `**` for any number of
// directories; names starting with '.' only match explicitly) that must match at
// least one file. Returns absolute, lexically normal paths, sorted, deduplicated.
// `listed`, when given, gets the directories a glob looked into (listed, or
// asked for one name), whose mtimes change when a file is added or removed.
Result<std::vector<fs::path>> expand_source_pattern(const fs::path& base, std::string_view pattern,
                                                    std::vector<fs::path>* listed = nullptr);

// The build directory `file` names ("build_dir", else "build", under its
// directory) from a quick read of it, without validating the rest: where a
// no-op build's record is looked for. nullopt when it cannot be read.
std::optional<fs::path> manifest_build_dir(const fs::path& file);

}  // namespace ob::manifest
