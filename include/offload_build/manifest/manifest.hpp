// The project manifest (offload.json): parsed, validated and resolved.
// Every path in a Manifest is absolute, so later stages never re-resolve.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/result.hpp"

namespace ob {

namespace fs = std::filesystem;

enum class Language { C, Cxx };

std::string_view language_name(Language lang);  // "c", "c++"

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
  std::vector<Target> targets;      // resolved, deduplicated, in manifest order
  std::vector<std::string> include_dirs;  // as written (relative to project_dir)
  std::vector<std::string> defines;       // NAME or NAME=VALUE, without -D
  std::vector<std::string> flags;         // every compile (device and host)
  std::vector<std::string> host_flags;    // host compiles only
  std::vector<std::string> device_flags;  // device compiles only
  std::vector<std::string> link_flags;    // the final link
  std::vector<std::string> libs;          // -l names (without -l) or paths
  std::optional<fs::path> toolchain;      // LLVM root, absolute

  fs::path program_path() const { return build_dir / output; }
};

// Read, validate and resolve `file`. Errors are usage errors (exit 2) of the form
//   path/offload.json:LINE:COL: error: WHAT; accepted: ...  [did you mean "X"?]
Result<Manifest> load_manifest(const fs::path& file);

// Same, from text (for tests); `file` is used for messages and relative paths.
Result<Manifest> parse_manifest(const std::string& text, const fs::path& file);

// Replace the manifest's targets with spellings from the command line (--target).
Result<void> override_targets(Manifest& manifest, const std::vector<std::string>& spellings);

}  // namespace ob
