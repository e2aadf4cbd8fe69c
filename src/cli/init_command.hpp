// offload-build init [--lang c|cxx|rust|cargo] DIR: a new project from templates/init/<lang>/.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "offload_build/util/result.hpp"

namespace ob::cli {

namespace fs = std::filesystem;

struct InitOptions {
  std::string lang = "c";  // c, cxx, rust (a manifest project), cargo (a cargo package)
  fs::path dir;
  std::optional<fs::path> templates;  // the templates setting ($OFFLOAD_BUILD_TEMPLATES)
};

// Where the templates are, first found: `setting` (the templates setting), then
// <dir of the binary>/../share/offload-build/templates (an installed
// offload-build), then the source tree's templates/ (OB_SOURCE_DIR; a build
// that was not installed). nullopt when none holds init/.
std::optional<fs::path> find_templates_dir(const std::optional<fs::path>& setting);

// The project name for a directory: its last component, with anything but
// letters, digits, '-' and '_' replaced by '-'.
std::string project_name_for(const fs::path& dir);

// Copy templates/init/<lang>/ into options.dir (created when missing),
// replacing @NAME@ by the project name and @CRATE@ by it with '_' for '-' (a
// Rust crate name) in every file. Refuses, writing
// nothing, when any file it would write exists. Says what it wrote on `out`.
Result<void> init_project(const InitOptions& options, std::ostream& out);

}  // namespace ob::cli
