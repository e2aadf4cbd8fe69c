#include "single_parse_planner.hpp"

#include <fmt/core.h>

#include <map>

#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"

namespace ob::single_parse_plan {

using plan_paths::DeviceStep;
using plan_paths::with_suffix;
using single_parse::UnitPaths;

namespace {

UnitPaths probed_paths(const SourceFile& src, const DeviceStep& step, const fs::path& cwd) {
  return {arg_path(src.path, cwd).string(), arg_path(step.out, cwd).string(),
          arg_path(step.dep, cwd).string(), {}, {}};
}

// What decides a device pass's listing besides the TU's paths.
std::string template_key(const SourceFile& src, const DeviceStep& step, const fs::path& cwd) {
  const UnitPaths p = probed_paths(src, step, cwd);
  std::string key = src.path.extension().string();
  for (const auto& arg : step.argv)
    key += '\0' + (arg == p.source ? "<src>" : arg == p.output ? "<out>" : arg == p.depfile ? "<dep>" : arg);
  return key;
}

std::vector<std::optional<Passes>> none(size_t n, const PlanOptions& o, const std::string& why) {
  if (o.note && n > 0) o.note("two-parse C/C++ pipeline for every translation unit: " + why);
  return std::vector<std::optional<Passes>>(n);
}

}  // namespace

std::vector<std::optional<Passes>> split(const Manifest& m,
                                         const std::vector<std::vector<DeviceStep>>& steps,
                                         const fs::path& cwd, const PlanOptions& o) {
  const size_t n = m.sources.size();
  if (!o.probe) return none(n, o, "no driver probe");
  if (o.two_parse) return none(n, o, "--two-parse");
  if (!m.host_flags.empty() || !m.device_flags.empty())
    return none(n, o, "host_flags or device_flags are set, so a device pass's own host parse "
                      "differs from the host pass's");

  // One probe per distinct template, on the first TU that has it: probe k
  // lists commands[k] for the TU paths probed[k]; uses[i] are TU i's probes.
  std::map<std::string, size_t> by_template;
  std::vector<single_parse::Argv> commands;
  std::vector<UnitPaths> probed;
  std::vector<std::vector<size_t>> uses(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& step : steps[i]) {
      auto [it, fresh] = by_template.try_emplace(template_key(m.sources[i], step, cwd), commands.size());
      if (fresh) {
        commands.push_back(step.argv);
        probed.push_back(probed_paths(m.sources[i], step, cwd));
      }
      uses[i].push_back(it->second);
    }
  }
  auto listings = list_all(*o.probe, commands, cwd, o.parallel_probes);
  std::vector<Result<single_parse::DevicePass>> results;
  for (size_t k = 0; k < commands.size(); ++k)
    results.push_back(listings[k] ? single_parse::templatize(*listings[k], probed[k])
                                  : Result<single_parse::DevicePass>(listings[k].error()));

  std::vector<std::optional<Passes>> out(n);
  size_t single = 0;
  for (size_t i = 0; i < n; ++i) {
    Passes passes;
    std::string why;
    for (size_t k : uses[i]) {
      const auto& pass = results[k];
      if (!pass) {
        why = pass.error().message;
        break;
      }
      passes.push_back(*pass);
    }
    if (why.empty()) {
      out[i] = std::move(passes);
      ++single;
    } else if (o.note) {
      o.note(fmt::format("two-parse pipeline for {}: {}", arg_path(m.sources[i].path, cwd).string(), why));
    }
  }
  if (o.note)
    o.note(fmt::format("single-parse C/C++ pipeline for {} of {} translation units ({} driver "
                       "probe{})",
                       single, n, commands.size(), commands.size() == 1 ? "" : "s"));
  return out;
}

plan_paths::UnitJobs add_unit(Plan& plan, const Manifest& m, const Toolchain& tc,
                              const SourceFile& src, size_t unit,
                              const std::vector<DeviceStep>& steps, const Passes& passes) {
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd).string(); };
  const fs::path stem = plan_paths::object_stem(m, src.path);
  const fs::path host_ir = with_suffix(stem, ".host.bc");

  const fs::path parse_dep = with_suffix(stem, ".host-ir.d");
  const JobId parse_id = plan.add(plan_paths::host_ir_job(
      src.path, host_ir, parse_dep,
      clang_openmp::host_ir(tc, m, src, rel(src.path), rel(host_ir), rel(parse_dep)), unit));

  std::vector<JobId> image_jobs;
  std::vector<clang_openmp::Image> images;
  for (size_t t = 0; t < steps.size(); ++t) {
    const DeviceStep& step = steps[t];
    const single_parse::DevicePass& pass = passes[t];
    const fs::path assembly = with_suffix(stem, ".dev." + step.target.short_name() + ".s");
    const UnitPaths paths{rel(src.path), rel(step.out), rel(step.dep), rel(host_ir), rel(assembly)};
    image_jobs.push_back(plan_paths::add_split_device(
        plan, plan_paths::device_job(step, src.path, unit, tc), pass, paths, host_ir, assembly, parse_id));
    images.push_back({rel(step.out), step.target,
                      clang_openmp::uses_offload_lto(m.flags) ? single_parse::target_features(pass)
                                                              : std::vector<std::string>{}});
  }

  const fs::path pkg = with_suffix(stem, ".offload");
  Job pack = plan_paths::package_job(plan, tc, images, pkg, src.path, image_jobs);
  pack.unit = unit;
  const JobId pack_id = plan.add(std::move(pack));

  const fs::path host_obj = with_suffix(stem, ".host.o");
  Job host = plan_paths::host_codegen_job(
      src.path, host_ir, pkg, host_obj,
      clang_openmp::host_codegen(tc, m, src, rel(host_ir), rel(pkg), rel(host_obj)), parse_id,
      pack_id, unit);
  host.driver_argv = clang_openmp::host_compile(tc, m, src, rel(src.path), rel(pkg), rel(host_obj),
                                                rel(with_suffix(stem, ".host.d")));
  return {plan.add(std::move(host)), host_obj};
}

}  // namespace ob::single_parse_plan
