#include <algorithm>

#include "offload_build/plan/plan.hpp"
#include "plan_paths.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"

namespace ob {

using plan_paths::object_stem;
using plan_paths::with_suffix;

fs::path arg_path(const fs::path& p, const fs::path& cwd) {
  fs::path rel = p.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return p;
  return rel;
}

Plan make_plan(const Manifest& m, const Toolchain& tc) {
  if (m.is_rust()) return make_rust_plan(m, tc);
  Plan plan;
  plan.cwd = m.project_dir;
  plan.program = m.program_path();
  plan.build_dir = m.build_dir;
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd); };
  auto add = [&](Job job) { return plan.add(std::move(job)); };

  std::vector<JobId> host_jobs;
  std::vector<fs::path> host_objects;
  size_t unit = 0;
  for (const auto& src : m.sources) {
    ++unit;
    const fs::path stem = object_stem(m, src.path);
    plan.directories.push_back(stem.parent_path());

    std::vector<JobId> device_jobs;
    std::vector<clang_openmp::Image> images;
    for (const auto& target : m.targets) {
      // <src>.dev.<target>.o, never the host object <src>.host.o
      fs::path out = with_suffix(stem, ".dev." + target.short_name() + ".o");
      Job job;
      job.kind = JobKind::DeviceCompile;
      job.target = target;
      job.source = src.path;
      fs::path dep = with_suffix(stem, ".dev." + target.short_name() + ".d");
      job.argv =
          clang_openmp::device_compile(tc, m, src, rel(src.path), target, rel(out), rel(dep));
      job.inputs = {src.path};
      job.outputs = {out};
      job.depfile = dep;
      job.unit = unit;
      job.inode_sensitive = true;  // kernel names embed the source's device and inode
      if (target.family() == TargetFamily::Nvptx && tc.cuda_path)
        job.tools = {*tc.cuda_path / "bin/ptxas"};
      job.forbid_device_runtime_calls = target.is_gpu() && !tc.has_device_runtime(target);
      device_jobs.push_back(add(std::move(job)));
      images.push_back({rel(out), target});
    }

    fs::path pkg = with_suffix(stem, ".offload");
    Job pack = plan_paths::package_job(plan, tc, images, pkg, src.path, device_jobs);
    pack.unit = unit;
    JobId pack_id = add(std::move(pack));

    fs::path host_obj = with_suffix(stem, ".host.o");
    Job host;
    host.kind = JobKind::HostCompile;
    host.source = src.path;
    fs::path host_dep = with_suffix(stem, ".host.d");
    host.argv = clang_openmp::host_compile(tc, m, src, rel(src.path), rel(pkg), rel(host_obj),
                                           rel(host_dep));
    host.inputs = {src.path, pkg};
    host.outputs = {host_obj};
    host.depfile = host_dep;
    host.unit = unit;
    host.inode_sensitive = true;
    host.deps = {pack_id};
    host_jobs.push_back(add(std::move(host)));
    host_objects.push_back(host_obj);
  }

  std::vector<fs::path> link_args;
  for (const auto& o : host_objects) link_args.push_back(rel(o));
  Job link;
  link.kind = JobKind::Link;
  const fs::path link_dep = m.build_dir / "obj" / (m.output + ".link.d");
  link.argv = clang_openmp::link(tc, m, link_args, rel(plan.program), rel(link_dep));
  link.inputs = host_objects;
  link.outputs = {plan.program};
  link.depfile = link_dep;
  plan.directories.push_back(link_dep.parent_path());
  link.tools = plan_paths::link_tools(m, tc, /*with_ptxas=*/false);
  link.deps = host_jobs;
  add(std::move(link));
  plan.directories.push_back(plan.program.parent_path());

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()),
                         plan.directories.end());
  return plan;
}

}  // namespace ob
