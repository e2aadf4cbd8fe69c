// `offload-build cargo`'s steps as one Plan (see plan/cargo_plan.hpp).
#include "offload_build/plan/cargo_plan.hpp"

#include <algorithm>
#include <limits>

#include <fmt/core.h>

#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/util/strings.hpp"
#include "rust_chain.hpp"

namespace ob::plan {

namespace {

Job job_of(JobKind kind, const std::string& subject, std::vector<std::string> argv, std::vector<JobId> deps) {
  Job job;
  job.kind = kind;
  job.source = subject;  // "device host mycrate", "package mycrate"
  job.argv = std::move(argv);
  job.deps = std::move(deps);
  job.cacheable = false;  // only the device images are worth a cache entry
  return job;
}

// check|clippy: per kernel crate x target the device side, then the host
// side; no images, nothing cached.
CargoPlan make_check_plan(const CargoSession& s, const toolchain::frontend::RustFrontend& fe) {
  CargoPlan p;
  Plan& plan = p.plan;
  plan.cwd = s.dir;
  plan.build_dir = s.pkg.target_directory;
  p.script = "cd " + util::shell_quote(s.dir.string()) + "\n";
  p.host = std::numeric_limits<JobId>::max();  // no host step: each job is its command
  const fs::path clippy = s.cargo_bin.parent_path() / "cargo-clippy";
  std::vector<JobId> devices;
  for (const auto& c : s.crates)
    for (const auto& t : s.targets) {
      const auto inv = fe.cargo_device_check(s.cargo_bin, clippy, s.tc, c.pkg, s.user, t,
                                             {c.features, s.device_rustflags.at(t.triple).flags,
                                              c.config(t.triple).place, c.unify_workspace.count(t.triple) > 0});
      Job job = job_of(JobKind::DeviceCompile, c.pkg.name, inv.argv, {});
      job.target = t;
      job.env = inv.env;
      p.script += toolchain::cargo::display(inv) + "\n";
      devices.push_back(plan.add(std::move(job)));
      p.checks.emplace(devices.back(), inv);
    }
  const auto inv = fe.cargo_host_check(s.cargo_bin, clippy, s.tc, s.pkg, s.user, s.host_rustflags.flags);
  Job job = job_of(JobKind::HostCompile, s.pkg.name, inv.argv, devices);
  job.env = inv.env;
  p.script += toolchain::cargo::display(inv) + "\n";
  p.checks.emplace(plan.add(std::move(job)), inv);
  return p;
}

// The host pass: cargo build told where the embedded images are (or the
// package, for rustc's native flavour), named by the package's content.
CargoHostStep host_step(const CargoSession& s, const toolchain::frontend::RustFrontend& fe, const rust_chain::Paths& paths,
                        const rust_chain::Links& links, const fs::path& off, const HostGroup& group) {
  const bool reads_package = fe.host_reads_package(s.tc);
  CargoHostStep host;
  host.pkg = s.pkg;
  for (const auto& pkg : group.packages) host.ids.push_back(pkg.id);
  host.package = paths.package;
  host.image = links.embedded.value_or(paths.package);
  if (links.embedded) {
    host.named = [off](const std::string& hash) { return off / ("devimg-" + hash + ".o"); };
    host.remove_stale = true;
  } else {  // -Zoffload=Host= wants this name
    host.named = [off](const std::string& hash) { return off / ("native-" + hash) / "host.out"; };
  }
  host.pass = [&s, &fe, reads_package, user = group.user](const fs::path& named) {
    auto inv = fe.cargo_host(s.cargo_bin, s.tc, s.pkg, user, s.targets,
                             reads_package ? std::nullopt : std::optional(named),
                             reads_package ? std::optional(named) : std::nullopt, s.host_rustflags.flags);
    // --timings / --trace: cargo writes its own page, whose crates become bars (run/cargo_timings.hpp).
    const bool asked = std::any_of(s.user.all.begin(), s.user.all.end(), [](const std::string& a) {
      return a == "--timings" || util::starts_with(a, "--timings=");
    });
    if (s.pictures && !asked) inv.argv.insert(inv.argv.begin() + 2, "--timings");
    // cargo test runs the tests: a kernel that cannot run on an offload device fails them.
    if (s.user.command == "test" && !config::env_or_null("OMP_TARGET_OFFLOAD"))
      inv.env.emplace_back("OMP_TARGET_OFFLOAD", "MANDATORY");
    return inv;
  };
  host.list_executables = s.user.command == "test" && std::count(group.user.all.begin(), group.user.all.end(), "--no-run");
  host.failed = s.user.command == "test" ? "cargo test failed (its output above says which tests)"
                                         : "the host pass failed (cargo's messages above say why)";
  // A linker of the user's choice: clang's --offload-link (clang-linker-wrapper) runs the link.
  // (lld is kept from collecting the offload entries: toolchain::cargo::links_with_lld.)
  for (const auto& f : s.host_rustflags.flags)
    if (f.find("-fuse-ld=") != std::string::npos && !toolchain::cargo::links_with_lld({f}))
      host.failed += fmt::format(
          "\n  note: the rustflags (from {}) give `{}`: the host pass links through clang's --offload-link "
          "(clang-linker-wrapper), which runs the host linker itself; if the link failed there, leave that flag "
          "out for `cargo offload` (RUSTFLAGS or CARGO_ENCODED_RUSTFLAGS without it win over cargo's config) "
          "or use -fuse-ld=lld, LLVM's own, which offload-build links with",
          s.host_rustflags.origin, f);
  return host;
}

// Per kernel crate, its images (one per target), the jobs that make them and their configurations.
struct Made {
  std::vector<JobId> jobs;
  std::vector<toolchain::frontend::Image> images;
  std::vector<std::string> configs;
};

// The device passes: per kernel crate x target a cacheable job writing its image.
std::vector<Made> add_device_jobs(CargoPlan& p, const CargoSession& s, const toolchain::frontend::RustFrontend& fe) {
  Plan& plan = p.plan;
  auto rel = [&](const fs::path& f) { return arg_path(f, plan.cwd); };
  auto line = [&](const std::string& text) { p.script += text + "\n"; };
  std::vector<Made> made(s.crates.size());
  for (size_t ci = 0; ci < s.crates.size(); ++ci) {
    const KernelCrate& c = s.crates[ci];
    for (const auto& t : s.targets) {
      const std::vector<std::string>& rustflags = s.device_rustflags.at(t.triple).flags;
      const std::string& config = c.config(t.triple).place;
      const auto inv = fe.cargo_device(s.cargo_bin, s.tc, c.pkg, s.user, t, {c.features, rustflags, config, c.unify_workspace.count(t.triple) > 0});
      const fs::path target_dir = toolchain::cargo::device_target_dir(c.pkg, t, config);
      const fs::path emitted = toolchain::cargo::device_output(c.pkg, t, config);
      CargoDeviceStep step{c.pkg, t, toolchain::cargo::device_image(c.pkg, t, config), std::nullopt,
                           fe.device_mir(emitted), nullptr, target_dir,
                           toolchain::cargo::device_clean(s.cargo_bin, c.pkg, s.user, t, config), {}};
      for (const auto& [name, setting] : s.config_env) step.config_env.push_back(name);
      step.echo_json = inv.echo_json;
      step.render = inv.render;
      step.colour = inv.colour;
      step.quiet = inv.quiet;
      if (fe.needs_image_link(t))
        step.image_link = [&fe, tc = &s.tc, t, object = fe.device_side_outputs(t, emitted).back()](
                              const fs::path& archive, const fs::path& out) {
          return fe.image_link(*tc, t, object, archive, out);
        };
      else
        step.output = emitted;
      Job job = job_of(JobKind::DeviceCompile, c.pkg.name, inv.argv, {});
      job.target = t;
      job.env = inv.env;
      job.outputs = {step.image, fs::path(step.image).replace_extension(".kernels.mir")};
      // What cargo and rustc say the pass read (toolchain::cargo::device_depfile).
      job.depfile = fs::path(step.image).replace_extension(".deps");
      job.env_deps = true;
      job.cacheable = true;
      plan.directories.push_back(step.image.parent_path());
      line(toolchain::cargo::display(inv));
      if (step.image_link) line(util::shell_join(step.image_link("<the archive cargo names>", step.image)));
      made[ci].images.push_back({rel(step.image), t});
      made[ci].configs.push_back(c.pkg.id + " " + t.triple + " " + config);
      const JobId id = plan.add(std::move(job));
      made[ci].jobs.push_back(id);
      p.devices.emplace(id, std::move(step));
    }
  }
  return made;
}

// Per group of programs, the package of its crates' images in that configuration's own place; then the
// host job, which runs each group's host pass in turn.
void add_host_jobs(CargoPlan& p, const CargoSession& s, const toolchain::frontend::RustFrontend& fe,
                   const std::vector<Made>& made) {
  Plan& plan = p.plan;
  auto rel = [&](const fs::path& f) { return arg_path(f, plan.cwd); };
  auto line = [&](const std::string& text) { p.script += text + "\n"; };
  std::vector<HostGroup> groups = s.groups;
  if (groups.empty()) {  // a session not grouped (run/cargo_build.cpp groups it): every package, every crate
    groups.push_back({s.packages.empty() ? std::vector{s.pkg} : s.packages, {}, s.user});
    for (size_t i = 0; i < s.crates.size(); ++i) groups.back().crates.push_back(i);
  }
  std::vector<JobId> chains;
  for (const HostGroup& g : groups) {
    std::vector<JobId> device_jobs;
    std::vector<toolchain::frontend::Image> images;
    std::vector<std::string> configs;
    for (size_t ci : g.crates) {
      device_jobs.insert(device_jobs.end(), made[ci].jobs.begin(), made[ci].jobs.end());
      images.insert(images.end(), made[ci].images.begin(), made[ci].images.end());
      configs.insert(configs.end(), made[ci].configs.begin(), made[ci].configs.end());
    }
    const toolchain::cargo::Package& first = g.packages.front();
    const fs::path off = toolchain::cargo::images_dir(s.pkg, s.user.profile, configs);
    plan.directories.push_back(off);
    const std::string lib = first.lib.value_or(toolchain::rustc::crate_name(first.name));
    rust_chain::Paths paths;
    paths.package = off / (lib + ".offload");
    paths.stub = off / "offload-stub.ll";
    paths.embedded = off / (lib + ".devimg.o");
    paths.subject = first.name;
    paths.stub_subject = paths.stub.filename();
    // The configuration's own build state (the first group's, for a plan of several).
    if (plan.state_file.empty()) plan.state_file = off / "build-state.json";
    const rust_chain::Links links = rust_chain::add(plan, fe, s.tc, images, device_jobs, paths, [&](Job job) {
      job.cacheable = false;  // only the device images are worth a cache entry
      job.up_to_date_check = true;  // but skipped while the images and stub are as they were
      line(util::shell_join(job.argv));
      return plan.add(std::move(job));
    });
    chains.push_back(links.last);
    CargoHostStep& host = p.host_steps.emplace_back(host_step(s, fe, paths, links, off, g));
    host.devices = device_jobs;
    // The host pass names its image by the package's content, known once the package is made.
    line(util::shell_join({"cp", rel(host.image).string(), rel(host.named("HASH")).string()}));
    line(toolchain::cargo::display(host.pass(host.named("HASH"))));
  }
  const CargoHostStep& first = p.host_steps.front();
  const auto pass = first.pass(first.named("HASH"));
  Job link = job_of(JobKind::Link, s.pkg.name, pass.argv, chains);
  link.env = pass.env;
  for (const auto& h : p.host_steps) link.inputs.insert(link.inputs.end(), {h.package, h.image});
  p.host = plan.add(std::move(link));
}

}  // namespace

CargoPlan make_cargo_plan(const CargoSession& s) {
  const toolchain::frontend::RustFrontend& fe = *toolchain::frontend::rust_for_language(manifest::Language::Rust);
  if (s.user.command == "check" || s.user.command == "clippy") return make_check_plan(s, fe);
  CargoPlan p;
  Plan& plan = p.plan;
  plan.cwd = s.dir;
  plan.build_dir = s.pkg.target_directory;
  plan.base_dirs = {s.pkg.workspace_root};  // a depfile's files keyed relative to it
  p.script = "cd " + util::shell_quote(s.dir.string()) + "\n";

  add_host_jobs(p, s, fe, add_device_jobs(p, s, fe));

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()), plan.directories.end());
  return p;
}

}  // namespace ob::plan
