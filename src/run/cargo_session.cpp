// The cargo flow's session (cargo_build.cpp): cargo metadata, the kernel
// crates, the targets; and cargo's own commands, run with the toolchain both passes use.
#include "cargo_session.hpp"

#include <algorithm>
#include <iostream>

#include <fmt/core.h>

#include "cargo_clean.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/toolchain/frontends/rust_kernels.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

namespace {

Result<std::vector<manifest::Target>> offload_targets(const Request& o, const toolchain::cargo::Package& pkg) {
  std::vector<std::string> spellings = o.targets.empty() ? pkg.targets : o.targets;
  if (spellings.empty()) spellings = {"host"};
  std::vector<manifest::Target> out;
  for (const auto& s : spellings)
    for (const auto& one : util::split(s, ',')) {
      auto t = manifest::resolve_target(one);
      if (!t) return Error::usage((o.targets.empty() ? "[package.metadata.offload] targets " : "--target ") +
                                  one + ": " + t.error().message);
      if (std::find(out.begin(), out.end(), *t) == out.end()) out.push_back(*t);
    }
  return out;
}

// The crates that get device passes: the package itself and the local crates it
// depends on whose library defines kernels (checked here, before cargo runs);
// the package's own library when none does (its checks still run).
Result<void> find_kernel_crates(plan::CargoSession& s, std::string_view metadata) {
  auto dirs_of = [&](const toolchain::cargo::Package& c, const std::vector<toolchain::cargo::Package>& deps) {
    std::vector<fs::path> dirs{c.manifest_path.parent_path()};
    for (const auto& d : deps) dirs.push_back(d.manifest_path.parent_path());
    return dirs;
  };
  // Each package's own library, then the local crates they depend on; each once.
  std::vector<plan::KernelCrate> candidates;
  std::vector<std::string> seen;
  auto add = [&](const toolchain::cargo::Package& p, std::vector<fs::path> dirs) {
    if (std::count(seen.begin(), seen.end(), p.id)) return;
    seen.push_back(p.id);
    plan::KernelCrate crate;
    crate.pkg = p;
    crate.dirs = std::move(dirs);
    candidates.push_back(std::move(crate));
  };
  std::vector<std::vector<toolchain::cargo::Package>> deps;
  for (const auto& pkg : s.packages) {
    deps.push_back(toolchain::cargo::local_dependencies(metadata, pkg));
    if (pkg.lib) add(pkg, dirs_of(pkg, deps.back()));
  }
  for (const auto& ds : deps)
    for (const auto& d : ds) add(d, {});
  for (auto& c : candidates) {
    c.scan = toolchain::rust::scan_crate(c.pkg.lib_root);
    OB_TRY(toolchain::rust::check_crate(c.scan, c.pkg.device_cfg, s.dir));
    // A crate with kernels the reader sees, or one that splits on the device
    // cfg (its kernels may come from a macro, a proc macro, include!): what
    // its device pass compiled is checked against the launches after the build.
    c.kernels = toolchain::rust::device_kernel_symbols(c.scan);
    if (c.kernels.empty() && !c.scan.cfg_names.count(c.pkg.device_cfg)) continue;
    if (c.dirs.empty()) c.dirs = dirs_of(c.pkg, toolchain::cargo::local_dependencies(metadata, c.pkg));
    s.crates.push_back(c);
  }
  if (!s.crates.empty()) return {};
  if (s.pkg.lib) {
    s.crates.push_back(candidates.front());  // the package's own library, without kernels
    return {};
  }
  for (const auto& pkg : s.packages)
    for (auto& name : toolchain::cargo::inactive_optional_dependencies(metadata, pkg))
      s.inactive_kernel_crates.push_back(std::move(name));
  if (!s.inactive_kernel_crates.empty()) return {};  // cargo alone (cargo())
  return Error::usage(fmt::format(
      "package {} has no library target and depends on no local crate whose library defines "
      "kernels: the device pass compiles the crate that holds the kernels as a library (src/lib.rs) "
      "with --cfg {}; move the kernels and the code that launches them into src/lib.rs and keep fn "
      "main in src/main.rs (see examples/rust-cargo), or into a library crate the package depends "
      "on (see examples/rust-workspace)",
      s.pkg.name, s.pkg.device_cfg));
}

// The programs grouped by the kernel crates in their dependency graphs
// (plan::HostGroup); a package with none in its graph (a tool of the
// workspace) joins the first group. One group keeps the user's arguments.
void group_programs(plan::CargoSession& s, std::string_view metadata) {
  std::vector<toolchain::cargo::Package> without;
  for (const auto& pkg : s.packages) {
    std::vector<std::string> ids{pkg.id};
    for (const auto& d : toolchain::cargo::local_dependencies(metadata, pkg)) ids.push_back(d.id);
    std::vector<size_t> crates;
    for (size_t i = 0; i < s.crates.size(); ++i)
      if (std::count(ids.begin(), ids.end(), s.crates[i].pkg.id)) crates.push_back(i);
    if (crates.empty()) {
      without.push_back(pkg);
      continue;
    }
    auto g = std::find_if(s.groups.begin(), s.groups.end(), [&](const plan::HostGroup& h) { return h.crates == crates; });
    if (g == s.groups.end()) g = s.groups.insert(s.groups.end(), plan::HostGroup{{}, crates, s.user});
    g->packages.push_back(pkg);
  }
  if (s.groups.empty()) {
    std::vector<size_t> all(s.crates.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    s.groups.push_back({{}, all, s.user});
  }
  s.groups.front().packages.insert(s.groups.front().packages.end(), without.begin(), without.end());
  if (s.groups.size() == 1) return;
  for (auto& g : s.groups) {
    std::vector<std::string> names;
    for (const auto& p : g.packages) names.push_back(p.name);
    g.user = toolchain::cargo::for_packages(s.user, names);
  }
}

}  // namespace

Result<plan::CargoSession> open_session(const Request& o, const CargoArgs& args, const std::optional<fs::path>& memo) {
  const std::vector<std::string>& cargo_args = args.cargo;
  std::error_code ec;
  if (!fs::is_directory(o.directory, ec))
    return Error::usage("-C " + o.directory.string() + ": no such directory");
  auto tc = toolchain::find_toolchain(std::nullopt, o.config.path("llvm"));
  if (!tc) return tc.error();
  auto rust = toolchain::rust::find_rust_toolchain(std::nullopt, fs::absolute(o.directory).lexically_normal());
  if (!rust) return rust.error();
  tc->rust = *rust;
  if (o.config.flag("verbose")) std::cerr << "offload-build: rust: " << rust->describe() << '\n';
  plan::CargoSession s{wants_pictures(o),
                       fs::absolute(o.directory).lexically_normal(),
                       *tc,
                       rust->cargo.value_or("cargo"),
                       toolchain::cargo::split_user_args(cargo_args),
                       {},
                       {},
                       {},
                       {},
                       {},
                       {},
                       {},
                       {},
                       {},
                       {}};
  s.user.command = args.command == "run" ? "build" : args.command;
  if (!args.run) s.user.after = args.program;
  std::vector<std::string> meta{s.cargo_bin.string(), "metadata", "--format-version", "1", "--offline"};
  for (const auto& f : toolchain::cargo::lock_flags(s.user)) meta.push_back(f);  // never a rewritten Cargo.lock
  for (size_t i = 0; i < cargo_args.size(); ++i)
    if (cargo_args[i] == "--manifest-path" && i + 1 < cargo_args.size())
      meta.insert(meta.end(), {"--manifest-path", cargo_args[i + 1]});
  // The user's features: cargo resolves an optional dependency (`gpu = ["dep:kern"]`)
  // only when they enable it, and the kernel crates are found in that resolution.
  meta.insert(meta.end(), s.user.features.begin(), s.user.features.end());
  s.answers = std::make_shared<toolchain::cargo::Answers>(
      memo, s.dir, std::vector<fs::path>{s.cargo_bin, rust->rustc});
  auto out = s.answers->ask(process::Command{meta, s.dir, {{"RUSTC", rust->rustc.string()}}}, true);
  if (!out) return out.error();
  if (out->exit_code != 0)
    return Error::usage(fmt::format(
        "`cargo metadata` failed in {}:\n{}{}", s.dir.string(), util::trim(out->err),
        out->err.find("offline") != std::string::npos && out->err.find("was passed to prevent this") == std::string::npos
            ? "\noffload-build runs cargo with --offline (it never fetches): run `cargo fetch` once in the "
              "project, then the build again"
            : ""));
  auto pkgs = toolchain::cargo::select_packages(out->out, s.dir, s.user.selection);
  if (!pkgs) return pkgs.error();
  s.packages = *pkgs;
  const toolchain::cargo::Selection& sel = s.user.selection;
  if (sel.packages.empty() && !sel.workspace && s.packages.size() == 1) s.user.implied_package = s.packages[0].name;
  // --target-dir is cargo's for every pass (cargo metadata has no such option):
  // the device passes, packages and embedded objects go under it too.
  if (s.user.target_dir)
    for (auto& p : s.packages) p.target_directory = (s.dir / *s.user.target_dir).lexically_normal();
  s.pkg = s.packages.front();
  OB_TRY(find_kernel_crates(s, out->out));
  if (s.crates.empty()) return s;  // no kernel crate in this build (inactive_kernel_crates)
  group_programs(s, out->out);
  auto targets = offload_targets(o, s.pkg.targets.empty() ? s.crates.front().pkg : s.pkg);
  if (!targets) return targets.error();
  s.targets = *targets;
  for (const auto& c : s.crates) {
    OB_TRY(toolchain::rust::check_kernel_abi(c.scan, s.targets, c.pkg.device_cfg, s.dir));
    OB_TRY(toolchain::rust::check_device_core(c.scan, s.targets, rust->sysroot(), c.pkg.device_cfg));
  }
  OB_TRY(toolchain::rustc::find_device_stub(s.targets, s.tc));
  OB_TRY(plan::resolve_passes(s));
  return s;
}

namespace {

// cargo's own command, with the toolchain both passes use, in the project's
// directory; its exit code.
Result<int> run_cargo(const Request& o, const fs::path& cargo, const std::vector<std::string>& args,
                      const fs::path& rustc) {
  std::vector<std::string> argv{cargo.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  process::Command cmd{argv, fs::absolute(o.directory), {{"RUSTC", rustc.string()}}};
  process::echo_command(cmd);
  if (o.dry_run) {
    std::cout << cmd.display() << '\n';
    return exit_code::ok;
  }
  auto pid = process::spawn(cmd);
  if (!pid) return pid.error();
  return process::wait_exit_code(*pid, true);
}

}  // namespace

// No kernel crate is in this build (an optional one left out by the
// features): the program is cargo's alone, built and run as cargo would.
Result<int> without_device_pass(const Request& o, const CargoArgs& parsed, const plan::CargoSession& s) {
  if (!o.config.flag("quiet"))
    std::cerr << fmt::format(
        "offload-build: note: no crate of this build defines kernels ({} {} optional, left out by the features "
        "given: enable {} with --features); cargo builds it alone, without a device pass\n",
        util::join(s.inactive_kernel_crates, ", "), s.inactive_kernel_crates.size() == 1 ? "is" : "are",
        s.inactive_kernel_crates.size() == 1 ? "it" : "them");
  std::vector<std::string> args{parsed.command};
  args.insert(args.end(), parsed.cargo.begin(), parsed.cargo.end());
  if (!parsed.program.empty()) {
    args.push_back("--");
    args.insert(args.end(), parsed.program.begin(), parsed.program.end());
  }
  return run_cargo(o, s.cargo_bin, args, s.tc.rust->rustc);
}

Result<int> cargo_own(const Request& o, const std::vector<std::string>& args) {
  // cargo's own, with the toolchain both passes use (a plain `clean` removes
  // the device dirs too: they are under the target dir).
  auto rust = toolchain::rust::find_rust_toolchain(std::nullopt, fs::absolute(o.directory).lexically_normal());
  if (!rust) return rust.error();
  const fs::path cargo = rust->cargo.value_or("cargo");
  auto code = run_cargo(o, cargo, args, rust->rustc);
  // -p, --release, --profile: what cargo removed of its own, offload-build removes of its.
  if (code && *code == exit_code::ok && !o.dry_run && !args.empty() && args[0] == "clean")
    OB_TRY(clean_offload_outputs(o, cargo, args));
  return code;
}

}  // namespace ob::run
