// Launcher mode's link (CMAKE_<LANG>_LINKER_LAUNCHER): an OpenMP offload link
// runs as one cached job, keyed like a manifest build's link on its tools,
// its argv and the content of every file the linker read (its depfile); the
// job is plan/launcher_plan.hpp's offload_link_job.
#include <algorithm>
#include <iostream>

#include <fmt/core.h>

#include "offload_build/run/build_context.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_compile.hpp"
#include "launcher_link.hpp"

namespace ob::run {

int cached_link(const LaunchSetup& setup, const toolchain::frontend::LinkRequest& link,
                const std::vector<std::string>& command, const Request& o, std::string& reason) {
  auto pass = [&](std::string why) {
    reason = std::move(why);
    return -1;
  };
  const fs::path& cwd = setup.cwd;
  const auto toolchain = toolchain_of(setup.compiler);
  if (!toolchain) return pass("no LLVM installation next to " + command.front());

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
  plan.add(plan::offload_link_job(link, std::move(inputs), plan.program, plan.build_dir, cwd, *toolchain));

  BuildContext context(o);
  process::install_signal_handlers();
  if (o.config.flag("verbose")) std::cerr << "offload-build: offload link, cached as one job\n";
  if (auto code = run_and_report(plan, context, command, plan.program.filename().string())) return *code;
  return pass("the link failed: the compiler shows its own diagnostics");
}

}  // namespace ob::run
