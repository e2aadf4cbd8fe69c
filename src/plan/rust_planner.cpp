// The plan for a Rust crate: one device pass per target (rustc --cfg <device_cfg>,
// a fat-LTO staticlib; for the host device an image link makes it one object),
// then the chain shared with `offload-build cargo` (rust_chain.hpp: the package,
// and in the test flavour the stub and the embed), and the host pass, which
// also links. Each command is the Rust frontend's (rust_frontend.hpp). Each
// device pass writes rustc's dep-info of what it read under the device cfg,
// so a module only the host compiles never reruns a device pass.
#include <algorithm>

#include "offload_build/plan/plan.hpp"
#include "common_jobs.hpp"
#include "rust_chain.hpp"

namespace ob::plan {

Plan make_rust_plan(const manifest::Manifest& m, const toolchain::Toolchain& tc) {
  const toolchain::frontend::RustFrontend& fe = *toolchain::frontend::rust_for_language(manifest::Language::Rust);
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
  const fs::path stem = common_jobs::object_stem(m, root);
  const bool reads_package = fe.host_reads_package(tc);
  plan.directories = {stem.parent_path(), plan.program.parent_path()};

  std::vector<JobId> device_jobs;
  std::vector<toolchain::frontend::Image> images;
  for (const auto& target : m.targets) {
    const std::string tag = "." + target.short_name();
    const fs::path out = common_jobs::with_suffix(stem, tag + fe.device_output_suffix(target));
    const fs::path dep = common_jobs::with_suffix(stem, tag + ".d");
    Job job;
    job.kind = JobKind::DeviceCompile;
    job.target = target;
    job.source = root;
    job.argv = fe.device(tc, m, rel(root), target, rel(out), rel(dep));
    job.inputs = {root};
    job.outputs = {out};
    for (const auto& side : fe.device_side_outputs(target, out)) job.outputs.push_back(side);
    job.depfile = dep;
    job.env_deps = true;  // env!, option_env!: rustc's dep-info names them
    JobId id = add(std::move(job));
    fs::path image = out;
    if (fe.needs_image_link(target)) {
      // The archive's fat-LTO object, with the core it uses, as one object.
      image = common_jobs::with_suffix(stem, tag + fe.device_image_suffix(target));
      Job link;
      link.kind = JobKind::ImageLink;
      link.target = target;
      link.source = root;
      const fs::path crate_object = fe.device_side_outputs(target, out).back();
      link.argv = fe.image_link(tc, target, rel(crate_object), rel(out), rel(image));
      link.inputs = {crate_object, out};
      if (tc.rust_device_stub) link.inputs.push_back(*tc.rust_device_stub);
      link.outputs = {image};
      link.deps = {id};
      id = add(std::move(link));
    }
    device_jobs.push_back(id);
    images.push_back({rel(image), target});
  }

  rust_chain::Paths paths;
  // The native flavour's -Zoffload=Host= wants the package as <absolute dir>/host.out.
  paths.package = reads_package ? stem.parent_path() / "host.out" : common_jobs::with_suffix(stem, ".offload");
  paths.stub = m.build_dir / "obj" / "offload-stub.ll";
  paths.embedded = common_jobs::with_suffix(stem, ".devimg.o");
  paths.subject = root;
  paths.stub_subject = paths.stub;
  if (!reads_package) plan.directories.push_back(paths.stub.parent_path());
  const rust_chain::Links links = rust_chain::add(plan, fe, tc, images, device_jobs, paths, add);

  const fs::path host_dep = common_jobs::with_suffix(stem, ".host.d");
  const fs::path host_mir = common_jobs::with_suffix(stem, ".launches.mir");
  Job link;
  link.kind = JobKind::Link;
  link.source = root;
  link.argv = fe.host(tc, m, rel(root), links.embedded ? std::optional(rel(*links.embedded)) : std::nullopt,
                      reads_package ? std::optional(paths.package) : std::nullopt, rel(plan.program),
                      rel(host_dep), rel(host_mir));
  link.inputs = {root, links.embedded.value_or(paths.package)};
  link.outputs = {plan.program, host_mir};
  link.depfile = host_dep;
  link.env_deps = true;
  link.tools = common_jobs::link_tools(m, tc, /*with_ptxas=*/true);
  link.tools.push_back(fe.link_driver(tc));
  std::sort(link.tools.begin(), link.tools.end());
  link.deps = {links.last};
  add(std::move(link));

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()),
                         plan.directories.end());
  return plan;
}

}  // namespace ob::plan
