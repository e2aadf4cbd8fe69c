// Launcher mode's link (CMAKE_<LANG>_LINKER_LAUNCHER): an OpenMP offload link
// runs as one cached job, keyed like a manifest build's link on its tools,
// its argv and the content of every file the linker read (its depfile); the
// job is plan/launcher_plan.hpp's offload_link_job.
#include "offload_build/plan/launcher_plan.hpp"
#include "launcher_link.hpp"

namespace ob::run {

PathAnswer cached_link(const LaunchSetup& setup, const toolchain::frontend::LinkRequest& link, std::string& reason) {
  auto pass = [&](std::string why) {
    reason = std::move(why);
    return PathAnswer{};
  };
  const fs::path& cwd = setup.cwd;
  if (!setup.toolchain) return pass("no LLVM installation next to " + setup.compiler.string());

  std::error_code ec;
  plan::Plan plan;
  plan.cwd = cwd;
  plan.base_dirs = setup.bases;
  plan.name_anchor = setup.anchor;
  plan.program = (cwd / link.output).lexically_normal();
  if (!fs::is_directory(plan.program.parent_path(), ec)) return pass("the output's directory does not exist");
  plan.build_dir = plan::launcher_work_dir(plan.program);
  plan.directories = {plan.build_dir};
  std::vector<fs::path> inputs;
  for (const auto& in : link.inputs) {
    const fs::path p = (cwd / in).lexically_normal();
    if (!fs::is_regular_file(p, ec)) return pass("input " + in + " is not a file");
    inputs.push_back(p);
  }
  plan.add(plan::offload_link_job(link, std::move(inputs), plan.program, plan.build_dir, cwd, *setup.toolchain));
  Split split;
  split.project = plan.program.filename().string();
  split.plan = std::move(plan);
  split.verbose = "offload link, cached as one job";
  split.failed = {"the link failed: the compiler shows its own diagnostics", "", {}};
  return {std::move(split), std::nullopt};
}

}  // namespace ob::run
