// The plan for a Rust crate: one device pass per target (rustc --cfg <device_cfg>,
// a fat-LTO staticlib; for the host device an image link makes it one object),
// the images packaged and embedded into a host object, and the host pass, which
// also links. Each device pass writes rustc's dep-info of what it read under the
// device cfg, so a module only the host compiles never reruns a device pass.
#include <algorithm>

#include "offload_build/plan/plan.hpp"
#include "plan_paths.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"

namespace ob {

Plan make_rust_plan(const Manifest& m, const Toolchain& tc) {
  Plan plan;
  plan.cwd = m.project_dir;
  plan.program = m.program_path();
  plan.build_dir = m.build_dir;
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd); };
  auto add = [&](Job job) {
    job.unit = 1;  // one crate: the device, package and host jobs share kernel names
    return plan.add(std::move(job));
  };
  const fs::path root = m.sources.front().path;
  const fs::path stem = plan_paths::object_stem(m, root);
  const bool native = tc.rust->flavour == rust::Flavour::Native;
  plan.directories = {stem.parent_path(), plan.program.parent_path()};

  std::vector<JobId> device_jobs;
  std::vector<clang_openmp::Image> images;
  for (const auto& target : m.targets) {
    const std::string tag = "." + target.short_name();
    const fs::path out = plan_paths::with_suffix(stem, tag + rustc::device_output_suffix(target));
    const fs::path dep = plan_paths::with_suffix(stem, tag + ".d");
    Job job;
    job.kind = JobKind::DeviceCompile;
    job.target = target;
    job.source = root;
    job.argv = rustc::device_compile(tc, m, rel(root), target, rel(out), rel(dep));
    job.inputs = {root};
    job.outputs = {out};
    job.depfile = dep;
    JobId id = add(std::move(job));
    fs::path image = out;
    if (rustc::needs_device_link(target)) {
      // The archive's fat-LTO object, with the core it uses, as one object.
      image = plan_paths::with_suffix(stem, tag + rustc::device_image_suffix(target));
      Job link;
      link.kind = JobKind::Assemble;
      link.target = target;
      link.source = root;
      link.argv = rustc::device_link(tc, target, m.rust_kernels, rel(out), rel(image));
      link.inputs = {out};
      if (tc.rust_device_stub) link.inputs.push_back(*tc.rust_device_stub);
      link.outputs = {image};
      link.deps = {id};
      id = add(std::move(link));
    }
    device_jobs.push_back(id);
    images.push_back({rel(image), target});
  }

  // The native flavour's -Zoffload=Host= wants the package as <absolute dir>/host.out.
  const fs::path pkg = native ? stem.parent_path() / "host.out" : plan_paths::with_suffix(stem, ".offload");
  JobId last = add(plan_paths::package_job(plan, tc, images, pkg, root, device_jobs));

  std::optional<fs::path> embedded;
  if (!native) {
    const fs::path stub = m.build_dir / "obj" / "offload-stub.ll";
    Job empty;
    empty.kind = JobKind::Package;
    empty.source = stub;
    empty.argv = rustc::embed_stub(rel(stub));
    empty.outputs = {stub};
    plan.directories.push_back(stub.parent_path());
    JobId stub_id = add(std::move(empty));

    embedded = plan_paths::with_suffix(stem, ".devimg.o");
    Job embed;
    embed.kind = JobKind::HostCompile;
    embed.source = root;
    embed.argv = rustc::embed(tc, rel(stub), rel(pkg), rel(*embedded));
    embed.inputs = {stub, pkg};
    embed.outputs = {*embedded};
    embed.deps = {stub_id, last};
    last = add(std::move(embed));
  }

  const fs::path host_dep = plan_paths::with_suffix(stem, ".host.d");
  Job link;
  link.kind = JobKind::Link;
  link.source = root;
  link.argv = rustc::host_link(tc, m, rel(root), embedded ? std::optional(rel(*embedded)) : std::nullopt,
                               native ? std::optional(pkg) : std::nullopt, rel(plan.program),
                               rel(host_dep));
  link.inputs = {root, embedded.value_or(pkg)};
  link.outputs = {plan.program};
  link.depfile = host_dep;
  link.tools = plan_paths::link_tools(m, tc, /*with_ptxas=*/true);
  link.tools.push_back(tc.clang);  // rustc links through clang
  std::sort(link.tools.begin(), link.tools.end());
  link.deps = {last};
  add(std::move(link));

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()),
                         plan.directories.end());
  return plan;
}

}  // namespace ob
