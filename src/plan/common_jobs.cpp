#include "common_jobs.hpp"

#include <algorithm>

namespace ob::plan::common_jobs {

fs::path object_stem(const manifest::Manifest& m, const fs::path& source) {
  fs::path rel = source.lexically_relative(m.project_dir);
  fs::path safe;
  for (const auto& part : rel) safe /= (part == ".." ? fs::path("__") : part);
  if (rel.empty()) safe = source.filename();
  return m.build_dir / "obj" / safe;
}

fs::path with_suffix(const fs::path& stem, const std::string& suffix) {
  return stem.parent_path() / (stem.filename().string() + suffix);
}

std::vector<fs::path> link_tools(const manifest::Manifest& m, const toolchain::Toolchain& tc, bool with_ptxas) {
  std::vector<fs::path> tools{tc.linker_wrapper};
  tools.push_back(toolchain::clang_openmp::host_linker(tc, m));
  for (const auto& t : m.targets) {
    if (t.family() == manifest::TargetFamily::Nvptx && tc.cuda_path) {
      if (with_ptxas) tools.push_back(*tc.cuda_path / "bin/ptxas");
      tools.push_back(*tc.cuda_path / "bin/nvlink");
    }
    if (t.family() == manifest::TargetFamily::Amdgcn) tools.push_back(tc.root / "bin/ld.lld");
  }
  std::sort(tools.begin(), tools.end());
  tools.erase(std::unique(tools.begin(), tools.end()), tools.end());
  return tools;
}

Job host_ir_job(const fs::path& source, const fs::path& host_ir, const fs::path& depfile,
                std::vector<std::string> argv, size_t unit) {
  Job parse;
  parse.kind = JobKind::HostIr;
  parse.source = source;
  parse.argv = std::move(argv);
  parse.inputs = {source};
  parse.outputs = {host_ir};
  parse.depfile = depfile;
  parse.unit = unit;
  parse.inode_sensitive = true;  // kernel names embed the source's device and inode
  return parse;
}

Job host_codegen_job(const fs::path& source, const fs::path& host_ir, const fs::path& pkg,
                     const fs::path& object, std::vector<std::string> argv, JobId parse,
                     JobId pack, size_t unit) {
  Job host;
  host.kind = JobKind::HostCompile;
  host.source = source;
  host.argv = std::move(argv);
  host.inputs = {host_ir, pkg};  // reads no source: only the bytes of these decide
  host.outputs = {object};
  host.deps = {parse, pack};
  host.unit = unit;
  return host;
}

Job device_job(const DeviceStep& step, const fs::path& source, size_t unit, const toolchain::Toolchain& tc) {
  Job job;
  job.kind = JobKind::DeviceCompile;
  job.target = step.target;
  job.source = source;
  job.argv = step.argv;
  job.inputs = {source};
  job.outputs = {step.out};
  job.depfile = step.dep;
  job.unit = unit;
  job.inode_sensitive = true;  // kernel names embed the source's device and inode
  if (step.target.family() == manifest::TargetFamily::Nvptx) job.tools = toolchain::cuda_compile_files(tc);
  job.forbid_device_runtime_calls = step.target.is_gpu() && !tc.has_device_runtime(step.target);
  return job;
}

JobId add_split_device(Plan& plan, Job dev, const toolchain::single_parse::DevicePass& pass,
                       const toolchain::single_parse::UnitPaths& paths, const fs::path& host_ir,
                       const fs::path& assembly, JobId parse) {
  const fs::path object = dev.outputs.front();
  dev.driver_argv = std::move(dev.argv);  // what compile_commands.json lists
  dev.argv = toolchain::single_parse::instantiate(pass.device, paths);
  // argv[0] is the compiler itself; ptxas is its own job (its argv[0]).
  std::erase_if(dev.tools, [](const fs::path& t) { return t.filename() == "ptxas"; });
  dev.inputs.push_back(host_ir);
  dev.deps = {parse};
  if (pass.assemble.empty()) return plan.add(std::move(dev));
  dev.outputs = {assembly};  // checked for OpenMP runtime calls, before ptxas
  Job as;
  as.kind = JobKind::Assemble;
  as.target = dev.target;
  as.source = dev.source;
  as.unit = dev.unit;
  as.argv = toolchain::single_parse::instantiate(pass.assemble, paths);
  as.inputs = {assembly};
  as.outputs = {object};
  as.deps = {plan.add(std::move(dev))};
  return plan.add(std::move(as));
}

Job package_job(const Plan& plan, std::vector<std::string> argv, const fs::path& pkg,
                const fs::path& source, const std::vector<JobId>& device_jobs) {
  Job pack;
  pack.kind = JobKind::Package;
  pack.source = source;
  pack.argv = std::move(argv);
  for (JobId d : device_jobs) pack.inputs.push_back(plan.jobs[d].outputs.front());
  pack.outputs = {pkg};
  pack.deps = device_jobs;
  return pack;
}

}  // namespace ob::plan::common_jobs
