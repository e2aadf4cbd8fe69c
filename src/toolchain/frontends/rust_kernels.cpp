// The pre-compile check of a Rust offload crate: follow its module files, then
// check what reads best in the source (the device cfg, device code, kernel
// signatures; see rust_kernels.hpp). Kernels against launches are checked from
// what rustc compiled (rust_mir.hpp).
#include "offload_build/toolchain/frontends/rust_kernels.hpp"

#include <algorithm>
#include <iostream>

#include <cctype>
#include <set>

#include <fmt/core.h>

#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::rust {

namespace {

std::string shown(const fs::path& file, const fs::path& project_dir) {
  fs::path rel = file.lexically_relative(project_dir);
  return (rel.empty() || *rel.begin() == "..") ? file.string() : rel.string();
}

// cfg names every crate may test; never a misspelt device cfg.
bool is_common_cfg(const std::string& n) {
  static const std::set<std::string> common = {"test", "debug_assertions", "unix", "windows", "doc",
                                               "docsrs", "miri", "target_thread_local", "panic"};
  return common.count(n) > 0;
}

}  // namespace

std::string where(const fs::path& file, int line, const fs::path& project_dir) {
  return fmt::format("{}:{}", shown(file, project_dir), line);
}

CrateScan scan_crate(const fs::path& crate_root) {
  CrateScan scan;
  struct Todo {
    fs::path file;
    bool owns_dir;  // a crate root or mod.rs: its modules live next to it
    int scope;      // the cfg scope of its `mod` declaration
  };
  std::vector<Todo> todo{{crate_root, true, 0}};
  while (!todo.empty()) {
    auto [file, owns_dir, scope] = todo.back();
    todo.pop_back();
    if (std::find(scan.files.begin(), scan.files.end(), file) != scan.files.end()) continue;
    scan.files.push_back(file);
    const fs::path dir = owns_dir ? file.parent_path() : file.parent_path() / file.stem();
    const auto text = util::read_file(file);  // a regular file of at most 64 MiB
    if (!text) {
      scan.complete = false;
      continue;
    }
    for (const ModDecl& m : scan_text(*text, file, scan, scope)) {
      std::error_code ec;
      if (!m.path_attr.empty()) {
        const fs::path p = (file.parent_path() / m.path_attr).lexically_normal();
        if (fs::is_regular_file(p, ec)) todo.push_back({p, p.filename() == "mod.rs", m.scope});
        else scan.complete = false;
      } else if (fs::is_regular_file(dir / (m.name + ".rs"), ec)) {
        todo.push_back({dir / (m.name + ".rs"), false, m.scope});
      } else if (fs::is_regular_file(dir / m.name / "mod.rs", ec)) {
        todo.push_back({dir / m.name / "mod.rs", true, m.scope});
      } else {
        scan.complete = false;
      }
    }
  }
  return scan;
}

Result<void> check_crate(const CrateScan& scan, const std::string& cfg, const fs::path& project_dir) {
  return check_crate(scan, cfg, project_dir, std::cerr);
}

Result<void> check_crate(const CrateScan& scan, const std::string& cfg, const fs::path& project_dir,
                         std::ostream& warnings) {
  const std::vector<const FnItem*> kernels = device_kernels(scan);
  if (kernels.empty() && scan.launches.empty()) return {};
  auto fail = [](std::string msg) { return Error::failure(std::move(msg)); };

  if (!scan.cfg_names.count(cfg)) {
    std::vector<std::string> others;
    for (const auto& n : scan.cfg_names)
      if (!is_common_cfg(n)) others.push_back(n);
    std::string hint;
    if (others.size() == 1)
      hint = fmt::format(" (it tests cfg({0}) instead: rename that to {1}, or set \"device_cfg\": "
                         "\"{0}\" in offload.json)", others.front(), cfg);
    const int line = kernels.empty() ? scan.launches.front().line : kernels.front()->line;
    const fs::path& file = kernels.empty() ? scan.launches.front().file : kernels.front()->file;
    return fail(fmt::format(
        "{}: error: the crate never tests cfg({}), the cfg offload-build sets for the device pass "
        "only{}; without that split both passes compile the same code. Put the device side (the "
        "kernels, #![no_std]) under #[cfg({})] and the host side (fn main, the kernels' extern "
        "declarations, the launches) under #[cfg(not({}))]",
        where(file, line, project_dir), cfg, hint, cfg, cfg));
  }
  OB_TRY(check_device_code(scan, kernels, cfg, project_dir));
  // The kernels and launches themselves are checked from what rustc compiled
  // (rust_mir.hpp), after macros, paths and constants are resolved.
  OB_TRY(check_kernel_signatures(scan, kernels, cfg, project_dir));
  warn_panic_handler(scan, cfg, project_dir, warnings);
  return {};
}

Result<void> check_device_core(const CrateScan& scan, const std::vector<manifest::Target>& targets,
                               const fs::path& sysroot, const std::string& cfg) {
  if (scan.no_core) return {};
  for (const auto& t : targets) {
    std::error_code ec;
    if (!t.is_gpu() || fs::is_directory(sysroot / "lib/rustlib" / t.triple / "lib", ec)) continue;
    return Error::failure(fmt::format(
        "target {}: this rustc has no `core` for {} (nothing in {}), so the device crate must "
        "bring its own: add #![cfg_attr({}, feature(no_core, lang_items))] and "
        "#![cfg_attr({}, no_core)] to {} and define the lang items the kernels use, as "
        "examples/rust-nvptx does",
        t.short_name(), t.triple, (sysroot / "lib/rustlib").string(), cfg, cfg,
        scan.files.empty() ? std::string("the crate root") : scan.files.front().filename().string()));
  }
  return {};
}

}  // namespace ob::toolchain::rust
