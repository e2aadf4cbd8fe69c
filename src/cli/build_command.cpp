#include <iostream>

#include <fmt/core.h>

#include "offload_build/cli/commands.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/exec/subprocess.hpp"
#include "offload_build/manifest/manifest.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/device_runtime_check.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "options.hpp"

namespace ob::cli {

namespace {

fs::path manifest_path(const GlobalOptions& o) {
  fs::path dir = o.directory;
  if (!o.manifest) return dir / "offload.json";
  return o.manifest->is_absolute() ? *o.manifest : dir / *o.manifest;
}

}  // namespace

Result<fs::path> build(const GlobalOptions& o) {
  exec::set_echo_policy({o.verbose, nullptr});
  const fs::path file = manifest_path(o);
  if (!fs::exists(file)) {
    return Error::usage(fmt::format(
        "no manifest at {}; create an offload.json there (see docs/MANIFEST.md), or pass -C DIR "
        "or --manifest FILE",
        file.string()));
  }
  auto manifest = load_manifest(file);
  if (!manifest) return manifest.error();
  if (!o.targets.empty()) OB_TRY(override_targets(*manifest, o.targets));
  auto toolchain = find_toolchain(manifest->toolchain);
  if (!toolchain) return toolchain.error();

  const Plan plan = make_plan(*manifest, *toolchain);
  if (o.dry_run) {
    std::cout << dry_run_script(plan) << std::flush;
    return plan.program;
  }

  auto runner = make_process_runner();
  ExecOptions exec_options;
  exec_options.parallelism = effective_jobs(o);
  exec_options.progress = &std::cerr;
  exec_options.check_outputs = [&plan](const Job& job, const std::vector<fs::path>& outs) {
    return check_device_object(job, outs.front(), plan.cwd);
  };
  auto summary = execute(plan, *runner, exec_options);
  if (!summary) return summary.error();
  return plan.program;
}

}  // namespace ob::cli
