#include "offload_build/plan/launcher_plan.hpp"
#include "plan_paths.hpp"

#include <algorithm>
#include <tuple>

#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/single_parse.hpp"

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
                        const fs::path& cwd, DriverProbe* probe, size_t parallel_probes) {
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

  // Each target's device pass in the driver's form, and (single parse) the
  // commands the driver lists for it.
  struct Step {
    Target target;
    fs::path out, dep;
    bool writes_user_dep;
    std::vector<std::string> argv;
  };
  std::vector<Step> steps;
  for (auto it = req.targets.begin(); it != req.targets.end(); ++it) {
    Step s{*it, work / ("dev." + it->short_name() + ".o"), {}, user_dep && it == last_device, {}};
    s.dep = s.writes_user_dep ? *user_dep : work / ("dev." + it->short_name() + ".d");
    s.argv = clang_cli::device_argv(req, s.target, extra, rel(s.out), rel(s.dep), s.writes_user_dep);
    steps.push_back(std::move(s));
  }
  std::vector<std::string> host_options;
  for (const auto& a : req.args) host_options.insert(host_options.end(), a.tokens.begin(), a.tokens.end());
  std::optional<std::vector<single_parse::DevicePass>> passes;
  if (probe && !single_parse::host_uses_lto(host_options)) {
    std::vector<std::vector<std::string>> commands;
    for (const auto& s : steps) commands.push_back(s.argv);
    auto listings = list_all(*probe, commands, cwd, parallel_probes);
    passes.emplace();
    for (size_t t = 0; t < steps.size(); ++t) {
      const Step& s = steps[t];
      auto pass = listings[t] ? single_parse::templatize(*listings[t],
                                                         {req.source, rel(s.out), rel(s.dep), {}, {}},
                                                         /*shared=*/false)
                              : Result<single_parse::DevicePass>(listings[t].error());
      if (!pass) {
        passes.reset();  // the two-parse form, as the driver lays it out
        break;
      }
      passes->push_back(std::move(*pass));
    }
  }
  const fs::path host_ir = work / "host.bc";
  std::optional<JobId> parse_id;
  if (passes) {
    Job parse;
    parse.kind = JobKind::HostIr;
    parse.source = source;
    parse.outputs = {host_ir};
    parse.depfile = work / "host-ir.d";
    parse.argv = clang_cli::host_ir_argv(req, extra, rel(host_ir), rel(*parse.depfile));
    parse.inputs = {source};
    parse.inode_sensitive = true;
    parse_id = add(std::move(parse));
  }

  std::vector<JobId> device_jobs;
  std::vector<clang_openmp::Image> images;
  for (size_t t = 0; t < steps.size(); ++t) {
    const Target& target = steps[t].target;
    const fs::path& out = steps[t].out;
    const fs::path& dep = steps[t].dep;
    const bool writes_user_dep = steps[t].writes_user_dep;
    Job job;
    job.kind = JobKind::DeviceCompile;
    job.target = target;
    job.source = source;
    job.argv = steps[t].argv;
    job.inputs = {source};
    job.outputs = {out};
    job.depfile = dep;
    job.keep_depfile = writes_user_dep;  // cached and restored with the object
    job.inode_sensitive = true;  // kernel names embed the source's device and inode
    if (target.family() == TargetFamily::Nvptx && tc.cuda_path)
      job.tools = {*tc.cuda_path / "bin/ptxas"};
    if (!passes) {
      device_jobs.push_back(add(std::move(job)));
      images.push_back({rel(out), target});
      continue;
    }
    // Single parse: the driver's device cc1 reading the shared host IR, then
    // ptxas for nvptx.
    const auto& pass = (*passes)[t];
    const fs::path assembly = work / ("dev." + target.short_name() + ".s");
    const single_parse::UnitPaths paths{req.source, rel(out), rel(dep), rel(host_ir), rel(assembly)};
    job.unit = 1;
    device_jobs.push_back(
        plan_paths::add_split_device(plan, std::move(job), pass, paths, host_ir, assembly, *parse_id));
    images.push_back({rel(out), target});
  }

  const fs::path pkg = work / "images.offload";
  const JobId pack_id = add(plan_paths::package_job(plan, tc, images, pkg, source, device_jobs));

  Job host;
  host.kind = JobKind::HostCompile;
  host.source = source;
  host.outputs = {plan.program};
  host.deps = {pack_id};
  if (passes) {
    host.argv = clang_cli::host_codegen_argv(req, extra, rel(host_ir), rel(pkg), rel(plan.program));
    host.inputs = {host_ir, pkg};
    host.deps.insert(host.deps.begin(), *parse_id);
  } else {
    host.depfile = work / "host.d";
    host.argv = clang_cli::host_argv(req, extra, rel(pkg), rel(plan.program), rel(*host.depfile));
    host.inputs = {source, pkg};
    host.inode_sensitive = true;
  }
  add(std::move(host));
  return plan;
}

}  // namespace ob
