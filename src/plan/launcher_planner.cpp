#include "offload_build/plan/launcher_plan.hpp"
#include "plan_paths.hpp"

#include <algorithm>
#include <tuple>

#include "offload_build/toolchain/frontends/clang_openmp.hpp"

namespace ob {

fs::path launcher_work_dir(const fs::path& output) {
  return output.parent_path() / (output.filename().string() + ".offload-build");
}

std::optional<fs::path> requested_depfile(const clang_cli::CompileRequest& req, const fs::path& cwd) {
  if (!req.deps) return std::nullopt;
  fs::path file = req.deps->file ? fs::path(*req.deps->file)
                                 : fs::path(req.output_arg()).replace_extension(".d");
  return (cwd / file).lexically_normal();
}

Plan make_launcher_plan(const clang_cli::CompileRequest& req, const Toolchain& tc,
                        const fs::path& cwd) {
  Plan plan;
  plan.cwd = cwd;
  plan.program = (cwd / req.output_arg()).lexically_normal();
  const fs::path work = launcher_work_dir(plan.program);
  plan.build_dir = work;
  plan.directories = {work};
  auto rel = [&](const fs::path& p) { return arg_path(p, cwd).string(); };
  auto add = [&](Job job) {
    job.unit = 1;  // one translation unit
    return plan.add(std::move(job));
  };
  const fs::path source = (cwd / req.source).lexically_normal();

  // Debug info records the compilation directory (clang's default: the cwd).
  // Naming it makes it part of the cache key, so an object built in another
  // directory is never served with that directory in its debug info.
  std::vector<std::string> extra;
  if (req.debug_info && !req.sets_compilation_dir)
    extra.push_back("-fdebug-compilation-dir=" + cwd.string());

  // The compiler alone writes the caller's depfile from each front end in
  // turn, and the last one, the device compile of the greatest (triple,
  // arch), wins: that device pass writes it here too.
  const auto user_dep = requested_depfile(req, cwd);
  const auto last_device = std::max_element(
      req.targets.begin(), req.targets.end(), [](const Target& a, const Target& b) {
        return std::tie(a.triple, a.arch) < std::tie(b.triple, b.arch);
      });

  std::vector<JobId> device_jobs;
  std::vector<clang_openmp::Image> images;
  for (auto it = req.targets.begin(); it != req.targets.end(); ++it) {
    const Target& target = *it;
    const fs::path out = work / ("dev." + target.short_name() + ".o");
    const bool writes_user_dep = user_dep && it == last_device;
    const fs::path dep = writes_user_dep ? *user_dep : work / ("dev." + target.short_name() + ".d");
    Job job;
    job.kind = JobKind::DeviceCompile;
    job.target = target;
    job.source = source;
    job.argv = clang_cli::device_argv(req, target, extra, rel(out), rel(dep), writes_user_dep);
    job.inputs = {source};
    job.outputs = {out};
    job.depfile = dep;
    job.keep_depfile = writes_user_dep;  // cached and restored with the object
    job.inode_sensitive = true;  // kernel names embed the source's device and inode
    if (target.family() == TargetFamily::Nvptx && tc.cuda_path)
      job.tools = {*tc.cuda_path / "bin/ptxas"};
    device_jobs.push_back(add(std::move(job)));
    images.push_back({rel(out), target});
  }

  const fs::path pkg = work / "images.offload";
  const JobId pack_id = add(plan_paths::package_job(plan, tc, images, pkg, source, device_jobs));

  Job host;
  host.kind = JobKind::HostCompile;
  host.source = source;
  host.depfile = work / "host.d";
  host.argv = clang_cli::host_argv(req, extra, rel(pkg), rel(plan.program), rel(*host.depfile));
  host.inputs = {source, pkg};
  host.outputs = {plan.program};
  host.inode_sensitive = true;
  host.deps = {pack_id};
  add(std::move(host));
  return plan;
}

}  // namespace ob
