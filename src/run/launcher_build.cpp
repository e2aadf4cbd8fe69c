// Launcher mode's one-step build: `clang -fopenmp <targets> a.c b.c -o prog`,
// which clang runs as a compile of each source to a temporary object and the
// link. Split into each source's jobs (those of `clang ... -c a.c`) and the
// offload link (offload_link_job, as launcher_link.cpp runs it), all one
// plan (plan/launcher_plan.hpp), every job cached; the
// objects live in `<prog>.offload-build/`, removed when the build ends.
#include <algorithm>
#include <iostream>

#include <fmt/core.h>

#include "offload_build/run/build_context.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/util/paths.hpp"
#include "launcher_build.hpp"
#include "launcher_compile.hpp"

namespace ob::run {

int split_build(const LaunchSetup& setup, const toolchain::frontend::BuildRequest& build,
                const std::vector<std::string>& command, const Request& o, Unchanged& why) {
  using namespace toolchain::frontend::unchanged;
  const fs::path& cwd = setup.cwd;
  std::error_code ec;
  const fs::path program = (cwd / build.output_arg()).lexically_normal();
  if (!fs::is_directory(program.parent_path(), ec)) return unsplit(why, "the output's directory does not exist", kPaths);
  const auto toolchain = toolchain_of(setup.compiler);
  if (!toolchain)
    return unsplit(why, "no LLVM installation (llvm-offload-binary) next to " + command.front(), kCompiler);
  BuildContext context(o);
  open_launcher_cache(context);
  const auto memo = context.probe_memo();

  // Each source's compile, as `clang <options> -c SOURCE -o <work>/N-STEM.o`.
  const fs::path work = plan::launcher_work_dir(program);
  std::vector<toolchain::frontend::CompileRequest> compiles;
  std::vector<std::string> objects;
  for (size_t n = 0; n < build.sources.size(); ++n) {
    const fs::path source = build.argv[build.sources[n]];
    const fs::path object = work / fmt::format("{}-{}.o", n + 1, source.stem().string());
    objects.push_back(plan::arg_path(object, cwd).string());
    auto one = setup.frontend->parse(build.compile_argv(n, objects.back()));
    if (!one.compile) return unsplit(why, "a one-step build: " + one.pass_reason, one.pass_code.c_str(), one.option);
    if (auto unusable = one.compile->unusable_files(cwd)) {
      why = std::move(*unusable);
      return -1;
    }
    if (!ready_to_split(*one.compile, setup, *toolchain, memo, false, why)) return -1;
    compiles.push_back(std::move(*one.compile));
  }
  const auto link = setup.frontend->parse_link(build.link_argv(objects));
  if (!link.link) return unsplit(why, "a one-step build's link: " + link.pass_reason, kOneStep);
  std::vector<fs::path> link_inputs;
  for (const auto& in : link.link->inputs) {
    const fs::path p = (cwd / in).lexically_normal();
    if (!util::is_under(p, work) && !fs::is_regular_file(p, ec))
      return unsplit(why, "a one-step build's input " + in + " is not a file", kPaths);
    link_inputs.push_back(p);
  }

  std::unique_ptr<toolchain::DriverProbe> probe;
  if (!o.config.flag("two_parse")) probe = toolchain::make_driver_probe(*toolchain, memo);
  process::install_signal_handlers();
  plan::Plan plan;
  plan.cwd = cwd;
  plan.program = program;
  plan.build_dir = work;
  plan.directories = {work};
  std::vector<plan::JobId> object_jobs;
  for (size_t n = 0; n < compiles.size(); ++n) {
    const plan::Plan one =
        plan::make_launcher_plan(compiles[n], *toolchain, cwd, probe.get(), probe_jobs(o.config, context.jobserver()));
    if (process::interrupted()) return exit_code::interrupted;
    for (plan::JobId id : plan::append_unit(plan, one, n + 1)) object_jobs.push_back(id);
  }
  plan::Job link_job = plan::offload_link_job(*link.link, std::move(link_inputs), program, work, cwd, *toolchain);
  link_job.unit = compiles.size() + 1;
  link_job.deps = object_jobs;
  plan.add(std::move(link_job));
  use_stable_kernel_names(plan, setup, memo, o);
  if (o.config.flag("verbose"))
    std::cerr << fmt::format("offload-build: splitting a one-step build into {} compiles and the offload link\n",
                             compiles.size());
  if (auto code = run_and_report(plan, context, command, program.filename().string())) return *code;
  return unsplit(why, "a split pass failed: the compiler shows its own diagnostics", kFailed);
}

}  // namespace ob::run
