#include <algorithm>

#include "offload_build/plan/plan.hpp"
#include "plan_paths.hpp"
#include "single_parse_planner.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"

namespace ob {

using plan_paths::DeviceStep;
using plan_paths::UnitJobs;
using plan_paths::object_stem;
using plan_paths::with_suffix;

fs::path arg_path(const fs::path& p, const fs::path& cwd) {
  fs::path rel = p.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return p;
  return rel;
}

namespace {

// The driver form of each device pass of `src`, one per target.
std::vector<DeviceStep> device_steps(const Plan& plan, const Manifest& m, const Toolchain& tc,
                                     const SourceFile& src) {
  const fs::path stem = object_stem(m, src.path);
  std::vector<DeviceStep> steps;
  for (const auto& target : m.targets) {
    // <src>.dev.<target>.o, never the host object <src>.host.o
    DeviceStep s{target, with_suffix(stem, ".dev." + target.short_name() + ".o"),
                 with_suffix(stem, ".dev." + target.short_name() + ".d"), {}};
    s.argv = clang_openmp::device_compile(tc, m, src, arg_path(src.path, plan.cwd), target,
                                          arg_path(s.out, plan.cwd), arg_path(s.dep, plan.cwd));
    steps.push_back(std::move(s));
  }
  return steps;
}

// The two-parse form: each device pass is one driver command that parses the
// source for the host and for its target; the host pass parses it again.
UnitJobs add_two_parse_unit(Plan& plan, const Manifest& m, const Toolchain& tc,
                            const SourceFile& src, size_t unit,
                            const std::vector<DeviceStep>& steps) {
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd); };
  const fs::path stem = object_stem(m, src.path);
  std::vector<JobId> device_jobs;
  std::vector<clang_openmp::Image> images;
  for (const auto& step : steps) {
    device_jobs.push_back(plan.add(plan_paths::device_job(step, src.path, unit, tc)));
    images.push_back({rel(step.out), step.target});
  }

  fs::path pkg = with_suffix(stem, ".offload");
  Job pack = plan_paths::package_job(plan, tc, images, pkg, src.path, device_jobs);
  pack.unit = unit;
  JobId pack_id = plan.add(std::move(pack));

  Job host;
  host.kind = JobKind::HostCompile;
  host.source = src.path;
  host.outputs = {with_suffix(stem, ".host.o")};
  host.depfile = with_suffix(stem, ".host.d");
  host.argv = clang_openmp::host_compile(tc, m, src, rel(src.path), rel(pkg),
                                         rel(host.outputs.front()), rel(*host.depfile));
  host.inputs = {src.path, pkg};
  host.unit = unit;
  host.inode_sensitive = true;
  host.deps = {pack_id};
  fs::path host_obj = host.outputs.front();
  return {plan.add(std::move(host)), host_obj};
}

}  // namespace

Plan make_plan(const Manifest& m, const Toolchain& tc, const PlanOptions& options) {
  if (m.is_rust()) return make_rust_plan(m, tc);
  Plan plan;
  plan.cwd = m.project_dir;
  plan.program = m.program_path();
  plan.build_dir = m.build_dir;
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd); };

  std::vector<std::vector<DeviceStep>> steps;
  for (const auto& src : m.sources) steps.push_back(device_steps(plan, m, tc, src));
  const auto split = single_parse_plan::split(m, steps, plan.cwd, options);

  std::vector<JobId> host_jobs;
  std::vector<fs::path> host_objects;
  for (size_t i = 0; i < m.sources.size(); ++i) {
    const SourceFile& src = m.sources[i];
    plan.directories.push_back(object_stem(m, src.path).parent_path());
    UnitJobs u = split[i] ? single_parse_plan::add_unit(plan, m, tc, src, i + 1, steps[i], *split[i])
                          : add_two_parse_unit(plan, m, tc, src, i + 1, steps[i]);
    host_jobs.push_back(u.host_job);
    host_objects.push_back(u.host_object);
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
  plan.add(std::move(link));
  plan.directories.push_back(plan.program.parent_path());

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()),
                         plan.directories.end());
  return plan;
}

}  // namespace ob
