#include "compile_planner.hpp"

#include <algorithm>
#include <tuple>

#include "offload_build/toolchain/driver_probe.hpp"

namespace ob::plan::compile_plan {

using common_jobs::DeviceStep;

std::vector<DeviceStep> device_steps(const toolchain::frontend::Compile& compile, const Layout& layout,
                                     const std::vector<manifest::Target>& targets, const fs::path& cwd) {
  auto rel = [&](const fs::path& p) { return arg_path(p, cwd).string(); };
  const auto last =
      std::max_element(targets.begin(), targets.end(), [](const manifest::Target& a, const manifest::Target& b) {
        return std::tie(a.triple, a.arch) < std::tie(b.triple, b.arch);
      });
  std::vector<DeviceStep> steps;
  for (auto it = targets.begin(); it != targets.end(); ++it) {
    const std::string name = "dev." + it->short_name();
    DeviceStep s{*it, layout.file(name + ".o"), layout.file(name + ".d"), {}};
    s.callers_depfile = layout.callers_depfile && it == last;
    if (s.callers_depfile) s.dep = *layout.callers_depfile;
    s.argv = compile.device(s.target, rel(s.out), rel(s.dep), s.callers_depfile);
    steps.push_back(std::move(s));
  }
  return steps;
}

namespace {

// The host codegen's listing is asked with these names (the driver needs its
// input to exist; the rest it only forwards), so that one listing, which the
// probe remembers, serves every compile with the same flags.
constexpr const char* kListedIr = "/dev/null";
constexpr const char* kListedPackage = "<@package>";
constexpr const char* kListedObject = "<@object>";

// The listing's one -fc1 with the unit's paths, or empty when it has another shape.
toolchain::single_parse::Argv listed_codegen(const Result<std::vector<toolchain::single_parse::Argv>>& listing,
                                             const std::string& host_ir, const std::string& package,
                                             const std::string& object) {
  if (!listing || listing->size() != 1) return {};
  toolchain::single_parse::Argv argv = listing->front();
  if (argv.size() < 4 || argv[1] != "-fc1" || std::find(argv.begin(), argv.end(), "-emit-obj") == argv.end() ||
      argv.back() != kListedIr)
    return {};
  bool embeds = false, writes = false;
  for (auto& arg : argv) {
    if (arg == kListedObject) {
      arg = object;
      writes = true;
    } else if (auto at = arg.find(kListedPackage); at != std::string::npos) {
      arg.replace(at, std::string_view(kListedPackage).size(), package);
      embeds = true;
    }
  }
  argv.back() = host_ir;
  return embeds && writes ? argv : toolchain::single_parse::Argv{};
}

}  // namespace

std::optional<Listed> probe_passes(const toolchain::frontend::Frontend& fe, const toolchain::frontend::Compile& compile,
                                   toolchain::DriverProbe& probe,
                                   const std::vector<DeviceStep>& steps, const Layout& layout,
                                   const fs::path& cwd, size_t parallel) {
  auto rel = [&](const fs::path& p) { return arg_path(p, cwd).string(); };
  std::vector<toolchain::single_parse::Argv> commands;
  std::vector<std::vector<std::string>> names;  // the unit's paths: one probe serves units alike but for them
  for (const auto& s : steps) {
    commands.push_back(s.argv);
    names.push_back({layout.source_arg, rel(s.out), rel(s.dep)});
  }
  if (compile.host_parse_listed()) {
    commands.push_back(compile.host_codegen(kListedIr, kListedPackage, kListedObject));
    names.emplace_back();
  }
  auto listings = toolchain::list_all(probe, commands, cwd, parallel, {}, names);
  Listed listed;
  for (size_t t = 0; t < steps.size(); ++t) {
    if (!listings[t]) return std::nullopt;
    auto pass = fe.split_device_pass(
        *listings[t], {layout.source_arg, rel(steps[t].out), rel(steps[t].dep), {}, {}},
        /*shared=*/false);
    if (!pass) return std::nullopt;
    listed.passes.push_back(std::move(*pass));
  }
  if (compile.host_parse_listed())
    listed.host_codegen = listed_codegen(listings.back(), rel(layout.file("host.bc")), rel(layout.package),
                                         rel(layout.object));
  return listed;
}

common_jobs::UnitJobs add_compile(Plan& plan, const toolchain::Toolchain& tc, const toolchain::frontend::Frontend& fe,
                                 const toolchain::frontend::Compile& compile, const Layout& layout,
                                 const std::vector<DeviceStep>& steps,
                                 const std::optional<Passes>& passes,
                                 const toolchain::single_parse::Argv& host_codegen) {
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd).string(); };
  const fs::path host_ir = layout.file("host.bc");
  std::optional<JobId> parse;
  if (passes) {
    const fs::path parse_dep = layout.file("host-ir.d");
    // flang's host parse as its driver lists it (the -fc1: no second driver process).
    const toolchain::single_parse::UnitPaths unit{layout.source_arg, {}, rel(parse_dep), rel(host_ir), {}};
    parse = plan.add(common_jobs::host_ir_job(
        layout.source, host_ir, parse_dep,
        compile.host_parse_listed() ? toolchain::single_parse::instantiate(passes->front().host_ir, unit)
                                    : compile.host_ir(rel(host_ir), rel(parse_dep)),
        layout.unit));
  }

  std::vector<JobId> image_jobs;
  std::vector<toolchain::frontend::Image> images;
  for (size_t t = 0; t < steps.size(); ++t) {
    const DeviceStep& step = steps[t];
    Job job = common_jobs::device_job(step, layout.source, layout.unit, tc);
    job.keep_depfile = step.callers_depfile;  // cached and restored with the object
    if (!layout.check_device_runtime) job.forbid_device_runtime_calls = false;
    std::vector<std::string> features;
    if (passes) {
      // The driver's device cc1 reading the shared host IR, then ptxas for nvptx.
      const toolchain::single_parse::DevicePass& pass = (*passes)[t];
      const fs::path assembly = layout.file("dev." + step.target.short_name() + ".s");
      const toolchain::single_parse::UnitPaths paths{layout.source_arg, rel(step.out), rel(step.dep),
                                                     rel(host_ir), rel(assembly)};
      image_jobs.push_back(
          common_jobs::add_split_device(plan, std::move(job), pass, paths, host_ir, assembly, *parse));
      if (compile.offload_lto()) features = toolchain::single_parse::target_features(pass);
    } else {
      image_jobs.push_back(plan.add(std::move(job)));
    }
    images.push_back({rel(step.out), step.target, std::move(features)});
  }

  Job pack = common_jobs::package_job(plan, fe.package(tc, images, rel(layout.package)),
                                     layout.package, layout.source, image_jobs);
  pack.unit = layout.unit;
  const JobId pack_id = plan.add(std::move(pack));

  const fs::path host_dep = layout.file("host.d");
  Job host;
  if (passes) {
    host = common_jobs::host_codegen_job(layout.source, host_ir, layout.package, layout.object,
                                        !host_codegen.empty()
                                            ? host_codegen
                                            : compile.host_codegen(rel(host_ir), rel(layout.package),
                                                                   rel(layout.object)),
                                        *parse, pack_id, layout.unit);
    // What compile_commands.json lists: the host pass in the driver's form.
    host.driver_argv = compile.host(rel(layout.package), rel(layout.object), rel(host_dep));
  } else {
    host.kind = JobKind::HostCompile;
    host.source = layout.source;
    host.outputs = {layout.object};
    host.depfile = host_dep;
    host.argv = compile.host(rel(layout.package), rel(layout.object), rel(host_dep));
    host.inputs = {layout.source, layout.package};
    host.unit = layout.unit;
    host.inode_sensitive = true;
    host.deps = {pack_id};
  }
  if (layout.record) host.outputs.push_back(*layout.record);
  const JobId host_id = plan.add(std::move(host));
  // A frontend whose passes list no files read (flang): no depfiles to wait
  // for. Passes that write module files run here under remote execution.
  for (auto& job : plan.jobs) {
    if (job.unit != layout.unit || job.kind == JobKind::Link) continue;
    if (!fe.lists_reads() && job.kind != JobKind::Package) job.depfile.reset();
    if (compile.module_files()) job.runs_here = kWritesModules;
  }
  return {host_id, layout.object};
}

ModuleUses resolve_uses(const toolchain::frontend::ModuleFiles& files, const ModuleWriters& writers) {
  ModuleUses out;
  for (const auto& name : files.scan.uses) {
    if (auto it = writers.find(name); it != writers.end()) {
      out.inputs.push_back(it->second.first);
      out.deps.push_back(it->second.second);
      continue;
    }
    // Not one of the plan's: every place flang may find it is keyed when the
    // job is served, by content or by absence (a USE in an #if branch not
    // compiled reads none; a module another make job writes meanwhile
    // appears), and checked after the run (Job::unordered_reads).
    for (const auto& dir : files.search) {
      fs::path p = (dir / name).lexically_normal();
      if (std::find(out.unordered.begin(), out.unordered.end(), p) == out.unordered.end())
        out.unordered.push_back(std::move(p));
    }
  }
  return out;
}

JobId add_module_files(Plan& plan, size_t unit, const toolchain::frontend::ModuleFiles& files,
                       const ModuleUses& uses) {
  const auto in_unit = [&](const Job& j) { return j.unit == unit && j.kind != JobKind::Link; };
  const bool single = std::any_of(plan.jobs.begin(), plan.jobs.end(),
                                  [&](const Job& j) { return in_unit(j) && j.kind == JobKind::HostIr; });
  const std::optional<std::string>& problem = files.scan.problem;
  JobId writer = 0;
  for (auto& job : plan.jobs) {
    if (!in_unit(job)) continue;
    // The jobs that parse the source: the host parse (else the host pass) and the device passes.
    const bool parses = job.kind == JobKind::HostIr || job.kind == JobKind::DeviceCompile ||
                        (job.kind == JobKind::HostCompile && !single);
    if (!parses) continue;
    job.inputs.insert(job.inputs.end(), files.scan.reads.begin(), files.scan.reads.end());
    job.inputs.insert(job.inputs.end(), uses.inputs.begin(), uses.inputs.end());
    job.unordered_reads.insert(job.unordered_reads.end(), uses.unordered.begin(), uses.unordered.end());
    job.deps.insert(job.deps.end(), uses.deps.begin(), uses.deps.end());
    job.key_facts.push_back("source name: " + files.source_name);
    job.names_working_dir = files.in_working_dir;
    std::sort(job.deps.begin(), job.deps.end());
    job.deps.erase(std::unique(job.deps.begin(), job.deps.end()), job.deps.end());
    if (problem) {
      job.cacheable = false;
      job.uncacheable_reason = "flang lists no files read, and " + *problem;
    }
    // Every parse writes the module files (the same bytes, each by rename);
    // the host parse's are declared, cached and restored.
    if (job.kind == JobKind::DeviceCompile) continue;
    writer = job.id;
    for (const auto& name : files.scan.defines) {
      job.outputs.push_back(files.module_dir / name);
      job.written_in_place.push_back(files.module_dir / name);
    }
  }
  return writer;
}

bool reads_options(const Job& job) {
  return job.kind == JobKind::DeviceCompile || job.kind == JobKind::HostIr || job.kind == JobKind::HostCompile;
}

void add_option_files(Plan& plan, const std::vector<std::string>& host, const std::vector<std::string>& device,
                      const fs::path& cwd) {
  for (auto& job : plan.jobs) {
    if (!reads_options(job)) continue;
    for (const auto& f : job.kind == JobKind::DeviceCompile ? device : host) job.inputs.push_back((cwd / f).lexically_normal());
  }
}

}  // namespace ob::plan::compile_plan
