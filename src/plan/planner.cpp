#include <algorithm>
#include <map>
#include <memory>
#include <system_error>

#include "compile_planner.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "common_jobs.hpp"
#include "single_parse_planner.hpp"

namespace ob::plan {

using common_jobs::DeviceStep;
using common_jobs::UnitJobs;
using common_jobs::object_stem;
using common_jobs::with_suffix;

fs::path arg_path(const fs::path& p, const fs::path& cwd) {
  fs::path rel = p.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return p;
  return rel;
}

namespace {

// A manifest source as one compile: its files under build/obj/<source>.*.
compile_plan::Layout source_layout(const manifest::Manifest& m, const manifest::SourceFile& src, size_t unit,
                                   const fs::path& cwd) {
  const fs::path stem = object_stem(m, src.path);
  compile_plan::Layout l;
  l.source = src.path;
  l.source_arg = arg_path(src.path, cwd).string();
  l.dir = stem.parent_path();
  l.prefix = stem.filename().string() + ".";
  l.package = with_suffix(stem, ".offload");
  l.object = with_suffix(stem, ".host.o");
  l.unit = unit;
  return l;
}

// The files the manifest's options name that no depfile lists: inputs of
// every pass that reads those options, keyed by content, as in launcher mode;
// an option naming what cannot be keyed leaves the passes uncached. Each
// source's options are read by its own frontend (a Fortran flag is no C one).
void key_option_files(Plan& plan, const manifest::Manifest& m) {
  std::map<const toolchain::frontend::Frontend*, toolchain::frontend::OptionFiles> read;
  for (auto& job : plan.jobs) {
    if (!compile_plan::reads_options(job) || job.unit == 0 || job.unit > m.sources.size()) continue;
    const auto& fe = toolchain::frontend::for_language(m.sources[job.unit - 1].language);
    auto [it, fresh] = read.try_emplace(&fe);
    toolchain::frontend::OptionFiles& files = it->second;
    if (fresh) {
      files = fe.option_files(m);
      for (const auto& f : files.maybe) {
        std::error_code ec;
        if (!files.uncacheable && fs::exists(plan.cwd / f, ec))
          files.uncacheable = "offload.json: the -mllvm value " + f + " is a file, which offload-build cannot key";
      }
    }
    for (const auto& f : job.kind == JobKind::DeviceCompile ? files.device : files.host)
      job.inputs.push_back((plan.cwd / f).lexically_normal());
    if (!files.uncacheable) continue;
    job.cacheable = false;
    job.uncacheable_reason = *files.uncacheable;
  }
}

// The order the compiles are planned in: each after the compiles defining
// the modules it uses (Compile::module_files), else in the manifest's order.
// A cycle (an error flang reports) keeps the manifest's order for the rest.
std::vector<size_t> module_order(const std::vector<std::unique_ptr<toolchain::frontend::Compile>>& compiles) {
  const size_t n = compiles.size();
  std::map<std::string, size_t> definer;
  for (size_t i = 0; i < n; ++i)
    if (const auto* f = compiles[i]->module_files())
      for (const auto& name : f->scan.defines) definer.try_emplace(name, i);
  std::vector<std::vector<size_t>> needs(n);
  for (size_t i = 0; i < n; ++i)
    if (const auto* f = compiles[i]->module_files())
      for (const auto& name : f->scan.uses)
        if (auto it = definer.find(name); it != definer.end() && it->second != i) needs[i].push_back(it->second);
  std::vector<size_t> order;
  std::vector<bool> placed(n, false);
  while (order.size() < n) {
    bool progress = false;
    for (size_t i = 0; i < n; ++i) {
      if (placed[i] ||
          !std::all_of(needs[i].begin(), needs[i].end(), [&](size_t d) { return placed[d]; }))
        continue;
      placed[i] = progress = true;
      order.push_back(i);
      break;  // the earliest ready source first: the manifest's order where it may be kept
    }
    if (progress) continue;
    for (size_t i = 0; i < n; ++i)
      if (!placed[i]) {
        placed[i] = true;
        order.push_back(i);
        break;
      }
  }
  return order;
}

}  // namespace

Plan make_plan(const manifest::Manifest& m, const toolchain::Toolchain& tc, const PlanOptions& options) {
  if (m.is_rust()) return make_rust_plan(m, tc);
  Plan plan;
  plan.cwd = m.project_dir;
  plan.program = m.program_path();
  plan.build_dir = m.build_dir;
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd); };

  // Each source's compile and its device passes in the driver's form; the
  // single-parse split probes them all at once (one probe per distinct command).
  std::vector<compile_plan::Layout> layouts;
  std::vector<std::unique_ptr<toolchain::frontend::Compile>> compiles;
  std::vector<std::vector<DeviceStep>> steps;
  for (size_t i = 0; i < m.sources.size(); ++i) {
    const manifest::SourceFile& src = m.sources[i];
    layouts.push_back(source_layout(m, src, i + 1, plan.cwd));
    compiles.push_back(toolchain::frontend::for_language(src.language)
                           .manifest_compile(tc, m, src, layouts.back().source_arg));
    steps.push_back(compile_plan::device_steps(*compiles.back(), layouts.back(), m.targets, plan.cwd));
  }
  const auto split = single_parse_plan::split(m, compiles, steps, plan.cwd, options);

  // Module definers before their users (Fortran); the link keeps the manifest's order.
  std::vector<JobId> host_jobs(m.sources.size());
  std::vector<fs::path> host_objects(m.sources.size());
  compile_plan::ModuleWriters writers;
  for (size_t i : module_order(compiles)) {
    plan.directories.push_back(layouts[i].dir);
    UnitJobs u = compile_plan::add_compile(plan, tc, toolchain::frontend::for_language(m.sources[i].language),
                                           *compiles[i], layouts[i], steps[i], split[i]);
    host_jobs[i] = u.host_job;
    host_objects[i] = u.host_object;
    const auto* files = compiles[i]->module_files();
    if (!files) continue;
    plan.directories.push_back(files->module_dir);
    const JobId writer = compile_plan::add_module_files(plan, layouts[i].unit, *files,
                                                        compile_plan::resolve_uses(*files, writers));
    for (const auto& name : files->scan.defines) writers.try_emplace(name, files->module_dir / name, writer);
  }

  key_option_files(plan, m);

  std::vector<fs::path> link_args;
  for (const auto& o : host_objects) link_args.push_back(rel(o));
  Job link;
  link.kind = JobKind::Link;
  const fs::path link_dep = m.build_dir / "obj" / (m.output + ".link.d");
  // The link is Fortran's when any source is Fortran, else C++'s when any is
  // C++ (the driver links its language's runtime).
  auto any = [&](manifest::Language lang) {
    return std::any_of(m.sources.begin(), m.sources.end(),
                       [&](const manifest::SourceFile& s) { return s.language == lang; });
  };
  const manifest::Language linker = any(manifest::Language::Fortran) ? manifest::Language::Fortran : any(manifest::Language::Cxx) ? manifest::Language::Cxx : manifest::Language::C;
  link.argv = toolchain::frontend::for_language(linker).link(tc, m, link_args, rel(plan.program), rel(link_dep));
  link.inputs = host_objects;
  link.outputs = {plan.program};
  link.depfile = link_dep;
  plan.directories.push_back(link_dep.parent_path());
  link.tools = common_jobs::link_tools(m, tc, /*with_ptxas=*/false);
  link.deps = host_jobs;
  if (linker == manifest::Language::Fortran) {
    std::error_code ec;  // the GPU device runtime flang's link takes
    const bool gpu_runtime = fs::exists(tc.lib_dir / "libomptarget.devicertl.a", ec);
    link.failure_hint = gpu_runtime
        ? "if the undefined references are __kmpc_target_init and other OpenMP device-runtime calls: this "
          "LLVM's device runtime (libomptarget.devicertl.a) holds GPU code only, so flang's kernels link for "
          "the GPU targets but not for the host device (x86_64); build Fortran for a GPU target "
          "(docs/FORTRAN.md, \"Linking\")"
        : "if the undefined references are __kmpc_target_init and other OpenMP device-runtime "
          "calls: linking Fortran offload programs fails on this toolchain, which has no device "
          "runtime for flang's kernels (docs/FORTRAN.md, \"Linking\")";
  }
  plan.add(std::move(link));
  plan.directories.push_back(plan.program.parent_path());

  std::sort(plan.directories.begin(), plan.directories.end());
  plan.directories.erase(std::unique(plan.directories.begin(), plan.directories.end()),
                         plan.directories.end());
  return plan;
}

}  // namespace ob::plan
