#include <algorithm>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"

namespace ob {

namespace {

// build/obj/<source relative to the project, ".." made safe>
fs::path object_stem(const Manifest& m, const fs::path& source) {
  fs::path rel = source.lexically_relative(m.project_dir);
  fs::path safe;
  for (const auto& part : rel) safe /= (part == ".." ? fs::path("__") : part);
  if (rel.empty()) safe = source.filename();
  return m.build_dir / "obj" / safe;
}

fs::path with_suffix(const fs::path& stem, const std::string& suffix) {
  return stem.parent_path() / (stem.filename().string() + suffix);
}

}  // namespace

fs::path arg_path(const fs::path& p, const fs::path& cwd) {
  fs::path rel = p.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return p;
  return rel;
}

Plan make_plan(const Manifest& m, const Toolchain& tc) {
  Plan plan;
  plan.cwd = m.project_dir;
  plan.program = m.program_path();
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd); };
  auto add = [&](Job job) {
    job.id = plan.jobs.size();
    plan.jobs.push_back(std::move(job));
    return plan.jobs.back().id;
  };

  std::vector<JobId> host_jobs;
  std::vector<fs::path> host_objects;
  for (const auto& src : m.sources) {
    const fs::path stem = object_stem(m, src.path);
    plan.directories.push_back(stem.parent_path());

    std::vector<JobId> device_jobs;
    std::vector<clang_openmp::Image> images;
    for (const auto& target : m.targets) {
      fs::path out = with_suffix(stem, "." + target.short_name() + ".o");
      Job job;
      job.kind = JobKind::DeviceCompile;
      job.target = target;
      job.source = src.path;
      job.argv = clang_openmp::device_compile(tc, m, src, rel(src.path), target, rel(out));
      job.inputs = {src.path};
      job.outputs = {out};
      job.forbid_device_runtime_calls = target.is_gpu() && !tc.has_device_runtime(target);
      device_jobs.push_back(add(std::move(job)));
      images.push_back({rel(out), target});
    }

    fs::path pkg = with_suffix(stem, ".offload");
    Job pack;
    pack.kind = JobKind::Package;
    pack.source = src.path;
    pack.argv = clang_openmp::package(tc, images, rel(pkg));
    for (JobId d : device_jobs) pack.inputs.push_back(plan.jobs[d].outputs.front());
    pack.outputs = {pkg};
    pack.deps = device_jobs;
    JobId pack_id = add(std::move(pack));

    fs::path host_obj = with_suffix(stem, ".host.o");
    Job host;
    host.kind = JobKind::HostCompile;
    host.source = src.path;
    host.argv = clang_openmp::host_compile(tc, m, src, rel(src.path), rel(pkg), rel(host_obj));
    host.inputs = {src.path, pkg};
    host.outputs = {host_obj};
    host.deps = {pack_id};
    host_jobs.push_back(add(std::move(host)));
    host_objects.push_back(host_obj);
  }

  std::vector<fs::path> link_args;
  for (const auto& o : host_objects) link_args.push_back(rel(o));
  Job link;
  link.kind = JobKind::Link;
  link.argv = clang_openmp::link(tc, m, link_args, rel(plan.program));
  link.inputs = host_objects;
  link.outputs = {plan.program};
  link.deps = host_jobs;
  add(std::move(link));
  plan.directories.push_back(plan.program.parent_path());

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()),
                         plan.directories.end());
  return plan;
}

}  // namespace ob
