// The pre-compile check of a Rust offload crate: follow its module files, then
// compare device kernels, host declarations and launches (see rust_kernels.hpp).
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

const FnItem* find(const std::vector<FnItem>& fns, const std::string& name) {
  auto it = std::find_if(fns.begin(), fns.end(), [&](const FnItem& f) { return f.name == name; });
  return it == fns.end() ? nullptr : &*it;
}

bool is_pointer_param(const std::string& param) {
  const size_t colon = param.find(':');
  return colon != std::string::npos && param.find_first_not_of(' ', colon + 1) != std::string::npos &&
         param[param.find_first_not_of(' ', colon + 1)] == '*';
}

// The scalar types and array lengths a parameter's type names ("x : * mut [ f64 ; 8 ]": f64 8),
// in order: what a host declaration must name alike.
std::vector<std::string> type_words(const std::string& param) {
  static const std::set<std::string> scalars = {"f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8",
                                                "u16", "u32", "u64", "u128", "usize", "bool", "char"};
  std::vector<std::string> out;
  const size_t colon = param.find(':');
  if (colon == std::string::npos) return out;
  for (const auto& w : util::split(param.substr(colon + 1), ' '))
    if (scalars.count(w) || (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])))) out.push_back(w);
  return out;
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
  for (const Mention& m : scan.marks)
    if (util::starts_with(m.what, "kernel macro "))
      return fail(fmt::format(
          "{}: error: macro_rules! {} writes device kernels (#[rustc_offload_kernel]), which offload-build "
          "cannot see: it reads the source without expanding macros, so the host device's image would "
          "leave the kernels out and their launch would fail at run time (`Failed to load kernel`). Write "
          "each kernel out as a function, `#[unsafe(no_mangle)] #[rustc_offload_kernel] pub extern \"C\" fn "
          "NAME_f32(_dyn_ptr: *mut u8, ...) {{ ... }}`, and let the macro (or a generic function) write the "
          "body it calls",
          where(m.file, m.line, project_dir), m.what.substr(13)));
  for (const FnItem* k : kernels) {
    const std::string at = where(k->file, k->line, project_dir);
    if (!k->no_mangle) {
      return fail(fmt::format(
          "{}: error: device kernel `{}` has no #[unsafe(no_mangle)]: rustc would mangle its "
          "symbol, so the host's launch of `{}` would find no such kernel in the device image and "
          "fail at run time; add #[unsafe(no_mangle)] above it",
          at, k->name, k->name));
    }
    const FnItem* decl = find(scan.foreign, k->name);
    if (!decl) {
      return fail(fmt::format(
          "{}: error: device kernel `{}` has no host declaration: the host pass launches it "
          "through `unsafe extern \"C\" {{ fn {}(...); }}` under #[cfg(not({}))], declaring the "
          "kernel's parameters without the leading launch-environment pointer",
          at, k->name, k->name, cfg));
    }
    if (k->params.size() != decl->params.size() + 1 || !is_pointer_param(k->params.front())) {
      return fail(fmt::format(
          "{}: error: device kernel `{}` takes {} parameter(s) and its host declaration ({}) "
          "takes {}: the offload runtime passes a launch-environment pointer before the kernel's "
          "own arguments, so the device kernel needs it first, e.g. `fn {}(_dyn_ptr: *mut u8, "
          "...)`, while the host's extern declaration leaves it out (without it the program "
          "crashes when the kernel runs)",
          at, k->name, k->params.size(), where(decl->file, decl->line, project_dir),
          decl->params.size(), k->name));
    }
    for (size_t i = 0; i < decl->params.size(); ++i) {
      const auto device = type_words(k->params[i + 1]), host = type_words(decl->params[i]);
      if (device.empty() || host.empty() || device == host) continue;
      const auto [line, column] = i < decl->param_at.size() ? decl->param_at[i] : std::pair{decl->line, 0};
      return fail(fmt::format(
          "{}:{}: error: the host declaration of kernel `{}` takes `{}` where the kernel takes `{}` ({}): "
          "the launch would hand the kernel memory laid out as the host's type, and the kernel would read "
          "garbage; declare it as the kernel takes it",
          where(decl->file, line, project_dir), column, k->name, decl->params[i], k->params[i + 1],
          where(k->file, k->line, project_dir)));
    }
  }
  OB_TRY(check_kernel_signatures(scan, kernels, cfg, project_dir));
  for (const Launch& l : scan.launches) {
    const bool defined = std::any_of(kernels.begin(), kernels.end(),
                                     [&](const FnItem* k) { return k->name == l.kernel; });
    if (defined || !scan.complete) continue;
    return fail(fmt::format(
        "{}: error: offload({}, ...) launches `{}`, but the crate defines no device kernel `{}`: "
        "define `#[unsafe(no_mangle)] pub extern \"C\" fn {}(_dyn_ptr: *mut u8, ...)` under "
        "#[cfg({})]",
        where(l.file, l.line, project_dir), l.kernel, l.kernel, l.kernel, l.kernel, cfg));
  }
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
