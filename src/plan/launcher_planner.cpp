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

  // Debug info records the compilation directory (clang's default: the cwd),
  // and so does the IR of a compile tracking source locations (remarks,
  // records), which -flto/-foffload-lto objects keep. Naming it makes it part
  // of the cache key, so an object built in another directory is never
  // served with that directory in it.
  std::vector<std::string> extra;
  if ((req.debug_info || req.tracks_locations || req.opt_record) && !req.sets_compilation_dir)
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
  std::vector<plan_paths::DeviceStep> steps;
  size_t user_dep_step = req.targets.size();  // the step writing the caller's depfile, if any
  for (auto it = req.targets.begin(); it != req.targets.end(); ++it) {
    plan_paths::DeviceStep s{*it, work / ("dev." + it->short_name() + ".o"), {}, {}};
    const bool writes_user_dep = user_dep && it == last_device;
    if (writes_user_dep) user_dep_step = steps.size();
    s.dep = writes_user_dep ? *user_dep : work / ("dev." + it->short_name() + ".d");
    s.argv = clang_cli::device_argv(req, s.target, extra, rel(s.out), rel(s.dep), writes_user_dep);
    steps.push_back(std::move(s));
  }
  std::optional<std::vector<single_parse::DevicePass>> passes;
  if (probe) {
    std::vector<std::vector<std::string>> commands;
    for (const auto& s : steps) commands.push_back(s.argv);
    auto listings = list_all(*probe, commands, cwd, parallel_probes);
    passes.emplace();
    for (size_t t = 0; t < steps.size(); ++t) {
      const auto& s = steps[t];
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
    const fs::path parse_dep = work / "host-ir.d";
    parse_id = add(plan_paths::host_ir_job(
        source, host_ir, parse_dep, clang_cli::host_ir_argv(req, extra, rel(host_ir), rel(parse_dep)), 1));
  }

  std::vector<std::string> options;  // the caller's, as written
  for (const auto& a : req.args) options.insert(options.end(), a.tokens.begin(), a.tokens.end());
  const bool offload_lto = clang_openmp::uses_offload_lto(options);
  std::vector<JobId> device_jobs;
  std::vector<clang_openmp::Image> images;
  for (size_t t = 0; t < steps.size(); ++t) {
    const plan_paths::DeviceStep& step = steps[t];
    Job job = plan_paths::device_job(step, source, 1, tc);
    job.keep_depfile = t == user_dep_step;  // cached and restored with the object
    // Like the compiler alone, write the object; a missing device runtime is
    // the link's to report (no output check runs in launcher mode).
    job.forbid_device_runtime_calls = false;
    if (passes) {
      // Single parse: the driver's device cc1 reading the shared host IR,
      // then ptxas for nvptx.
      const fs::path assembly = work / ("dev." + step.target.short_name() + ".s");
      const single_parse::UnitPaths paths{req.source, rel(step.out), rel(step.dep), rel(host_ir),
                                          rel(assembly)};
      device_jobs.push_back(
          plan_paths::add_split_device(plan, std::move(job), (*passes)[t], paths, host_ir, assembly, *parse_id));
    } else {
      device_jobs.push_back(add(std::move(job)));
    }
    images.push_back({rel(step.out), step.target,
                      passes && offload_lto ? single_parse::target_features((*passes)[t])
                                            : std::vector<std::string>{}});
  }

  const fs::path pkg = work / "images.offload";
  const JobId pack_id = add(plan_paths::package_job(plan, tc, images, pkg, source, device_jobs));

  // Optimization records: the host pass writes the caller's file (a product,
  // cached with the object), as clang's host compile, its last cc1, does.
  std::optional<fs::path> record;
  if (req.opt_record) record = (cwd / *req.opt_record).lexically_normal();
  const std::string record_arg = record ? rel(*record) : std::string();
  if (passes) {
    Job host = plan_paths::host_codegen_job(
        source, host_ir, pkg, plan.program,
        clang_cli::host_codegen_argv(req, extra, rel(host_ir), rel(pkg), rel(plan.program), record_arg),
        *parse_id, pack_id, 1);
    if (record) host.outputs.push_back(*record);
    add(std::move(host));
    return plan;
  }
  Job host;
  host.kind = JobKind::HostCompile;
  host.source = source;
  host.outputs = {plan.program};
  if (record) host.outputs.push_back(*record);
  host.deps = {pack_id};
  host.depfile = work / "host.d";
  host.argv = clang_cli::host_argv(req, extra, rel(pkg), rel(plan.program), rel(*host.depfile), record_arg);
  host.inputs = {source, pkg};
  host.inode_sensitive = true;
  add(std::move(host));
  return plan;
}

}  // namespace ob
