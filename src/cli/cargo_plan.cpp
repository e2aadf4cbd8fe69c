// `offload-build cargo`'s steps as one Plan (see cargo_plan.hpp).
#include "cargo_plan.hpp"

#include <algorithm>
#include <limits>

#include "build_pictures.hpp"
#include "cargo_cache.hpp"
#include "cargo_run.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cli {

namespace {

// The device image's key: the pass with paths relative to the workspace, and
// `files`, the digest of the kernel crate's files and its local dependencies'.
std::string image_key(const CargoSession& s, const KernelCrate& c, const cargo::Invocation& inv,
                      const std::string& files, const std::vector<std::string>& rustflags) {
  cargo_cache::KeyInputs in;
  in.rustc_version = s.tc.rust->version_line;
  in.llvm = s.tc.root.filename().string();
  const std::string root = c.pkg.workspace_root.string() + "/";
  for (size_t i = 1; i < inv.argv.size(); ++i) {  // not cargo's own path
    std::string a = inv.argv[i];
    for (size_t at; (at = a.find(root)) != std::string::npos;) a.replace(at, root.size(), "<workspace>/");
    in.argv.push_back(a);
  }
  in.kernels = c.kernels;
  in.rustflags = rustflags;
  in.files = files;
  return cargo_cache::key(in);
}

Job job_of(JobKind kind, const std::string& subject, std::vector<std::string> argv, std::vector<JobId> deps) {
  Job job;
  job.kind = kind;
  job.source = subject;  // "device host mycrate", "package mycrate"
  job.argv = std::move(argv);
  job.deps = std::move(deps);
  job.cacheable = false;  // only the device images are worth a cache entry
  return job;
}

}  // namespace

namespace {

// check|clippy: per kernel crate x target the device side, then the host
// side; no images, nothing cached.
CargoPlan make_check_plan(const CargoSession& s) {
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
      const auto inv = cargo::device_check(s.cargo_bin, clippy, s.tc, c.pkg, s.user, t,
                                           {c.features, s.device_rustflags.at(t.triple).flags});
      Job job = job_of(JobKind::DeviceCompile, c.pkg.name, inv.argv, {});
      job.target = t;
      job.env = inv.env;
      p.script += cargo_run::display(inv) + "\n";
      devices.push_back(plan.add(std::move(job)));
    }
  const auto inv = cargo::host_check(s.cargo_bin, clippy, s.tc, s.pkg, s.user, s.host_rustflags.flags);
  Job job = job_of(JobKind::HostCompile, s.pkg.name, inv.argv, devices);
  job.env = inv.env;
  p.script += cargo_run::display(inv) + "\n";
  plan.add(std::move(job));
  return p;
}

}  // namespace

CargoPlan make_cargo_plan(const CargoSession& s, bool keys) {
  if (s.user.command == "check" || s.user.command == "clippy") return make_check_plan(s);
  CargoPlan p;
  Plan& plan = p.plan;
  plan.cwd = s.dir;
  plan.build_dir = s.pkg.target_directory;
  auto rel = [&](const fs::path& f) { return arg_path(f, plan.cwd); };
  auto line = [&](const std::string& text) { p.script += text + "\n"; };
  line("cd " + util::shell_quote(s.dir.string()));

  std::vector<JobId> device_jobs;
  std::vector<clang_openmp::Image> images;
  for (const auto& c : s.crates) {
    // Read once per crate, whatever the number of targets.
    const std::string files = keys ? cargo_cache::files_digest(c.pkg.workspace_root, c.dirs) : "";
    for (const auto& t : s.targets) {
      const std::vector<std::string>& rustflags = s.device_rustflags.at(t.triple).flags;
      const auto inv = cargo::device_pass(s.cargo_bin, s.tc, c.pkg, s.user, t, {c.features, rustflags});
      const fs::path target_dir = cargo::device_target_dir(c.pkg, t);
      DeviceStep step{c.pkg, t, cargo::device_image(c.pkg, t), std::nullopt, nullptr, target_dir,
                      {s.cargo_bin.string(), "clean", "-p", c.pkg.name, "--target", t.triple, "--profile",
                       s.user.profile, "--target-dir", target_dir.string()}};
      if (rustc::needs_device_link(t))
        step.image_link = [tc = &s.tc, t, kernels = c.kernels](const fs::path& archive, const fs::path& out) {
          return rustc::device_link(*tc, t, kernels, archive, out);
        };
      else
        step.output = cargo::device_output(c.pkg, t);
      Job job = job_of(JobKind::DeviceCompile, c.pkg.name, inv.argv, {});
      job.target = t;
      job.env = inv.env;
      job.outputs = {step.image};
      job.cacheable = true;
      if (keys) job.key_material = image_key(s, c, inv, files, rustflags);
      plan.directories.push_back(step.image.parent_path());
      line(cargo_run::display(inv));
      if (step.image_link) line(util::shell_join(step.image_link("<the archive cargo names>", step.image)));
      images.push_back({rel(step.image), t});
      const JobId id = plan.add(std::move(job));
      device_jobs.push_back(id);
      p.devices.emplace(id, std::move(step));
    }
  }

  const bool native = s.tc.rust->flavour == rust::Flavour::Native;
  const fs::path off = cargo::offload_dir(s.pkg, s.user.profile);
  plan.directories.push_back(off);
  const std::string lib = s.pkg.lib.value_or(rustc::crate_name(s.pkg.name));
  const fs::path package = off / (lib + ".offload");
  auto add = [&](Job job) {
    line(util::shell_join(job.argv));
    return plan.add(std::move(job));
  };
  Job pack = job_of(JobKind::Package, s.pkg.name, clang_openmp::package(s.tc, images, rel(package)), device_jobs);
  for (const auto& img : images) pack.inputs.push_back(plan.cwd / img.file);
  pack.outputs = {package};
  JobId last = add(std::move(pack));

  HostStep& host = p.host_step;
  host.pkg = s.pkg;
  host.package = package;
  host.image = package;
  host.named = [off](const std::string& hash) { return off / ("native-" + hash) / "host.out"; };  // -Zoffload=Host= wants this name
  if (!native) {
    const fs::path stub = off / "offload-stub.ll";
    Job empty = job_of(JobKind::Package, stub.filename().string(), rustc::embed_stub(rel(stub)), {});
    empty.outputs = {stub};
    const JobId stub_id = add(std::move(empty));
    host.image = off / (lib + ".devimg.o");
    Job embed = job_of(JobKind::HostCompile, s.pkg.name, rustc::embed(s.tc, rel(stub), rel(package), rel(host.image)),
                       {stub_id, last});
    embed.inputs = {stub, package};
    embed.outputs = {host.image};
    last = add(std::move(embed));
    host.named = [off](const std::string& hash) { return off / ("devimg-" + hash + ".o"); };
    host.remove_stale = true;
  }
  host.pass = [&s, native](const fs::path& named) {
    auto inv = cargo::host_pass(s.cargo_bin, s.tc, s.pkg, s.user, s.targets,
                                native ? std::nullopt : std::optional(named),
                                native ? std::optional(named) : std::nullopt, s.host_rustflags.flags);
    // --timings / --trace: cargo writes its own page, whose crates become bars (cargo_timings.hpp).
    const bool asked = std::any_of(s.user.all.begin(), s.user.all.end(), [](const std::string& a) {
      return a == "--timings" || util::starts_with(a, "--timings=");
    });
    if (wants_pictures(s.o) && !asked) inv.argv.insert(inv.argv.begin() + 2, "--timings");
    // cargo test runs the tests: a kernel that cannot run on an offload device fails them.
    if (s.user.command == "test" && !config::env_or_null("OMP_TARGET_OFFLOAD"))
      inv.env.emplace_back("OMP_TARGET_OFFLOAD", "MANDATORY");
    return inv;
  };
  host.failed = s.user.command == "test" ? "cargo test failed (its output above says which tests)"
                                         : "the host pass failed (cargo's messages above say why)";
  // The host pass names its image by the package's content, known once the package is made.
  line(util::shell_join({"cp", rel(host.image).string(), rel(host.named("HASH")).string()}));
  const auto pass = host.pass(host.named("HASH"));
  line(cargo_run::display(pass));
  Job link = job_of(JobKind::Link, s.pkg.name, pass.argv, {last});
  link.env = pass.env;
  link.inputs = {host.package, host.image};
  p.host = plan.add(std::move(link));

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()), plan.directories.end());
  return p;
}

}  // namespace ob::cli
