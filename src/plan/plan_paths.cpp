#include "plan_paths.hpp"

#include <algorithm>

namespace ob::plan_paths {

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

std::vector<fs::path> link_tools(const Manifest& m, const Toolchain& tc, bool with_ptxas) {
  std::vector<fs::path> tools{tc.linker_wrapper};
  const bool lld = m.linker == Manifest::Linker::Lld && tc.lld && !m.is_rust();  // as clang_openmp::link
  tools.push_back(lld ? *tc.lld : fs::path("/usr/bin/ld"));
  for (const auto& t : m.targets) {
    if (t.family() == TargetFamily::Nvptx && tc.cuda_path) {
      if (with_ptxas) tools.push_back(*tc.cuda_path / "bin/ptxas");
      tools.push_back(*tc.cuda_path / "bin/nvlink");
    }
    if (t.family() == TargetFamily::Amdgcn) tools.push_back(tc.root / "bin/ld.lld");
  }
  std::sort(tools.begin(), tools.end());
  tools.erase(std::unique(tools.begin(), tools.end()), tools.end());
  return tools;
}

Job package_job(const Plan& plan, const Toolchain& tc,
                const std::vector<clang_openmp::Image>& images, const fs::path& pkg,
                const fs::path& source, const std::vector<JobId>& device_jobs) {
  Job pack;
  pack.kind = JobKind::Package;
  pack.source = source;
  pack.argv = clang_openmp::package(tc, images, arg_path(pkg, plan.cwd));
  for (JobId d : device_jobs) pack.inputs.push_back(plan.jobs[d].outputs.front());
  pack.outputs = {pkg};
  pack.deps = device_jobs;
  return pack;
}

}  // namespace ob::plan_paths
