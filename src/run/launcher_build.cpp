// Launcher mode's one-step build: `clang -fopenmp <targets> a.c b.c -o prog`,
// which clang runs as a compile of each source to a temporary object and the
// link. Split into each source's jobs (those of `clang ... -c a.c`) and the
// offload link (offload_link_job, as launcher_link.cpp runs it), all one
// plan (plan/launcher_plan.hpp), every job cached; the
// objects live in `<prog>.offload-build/`, removed when the build ends.
#include <algorithm>
#include <iostream>

#include <fmt/core.h>

#include "offload_build/run/session.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/util/paths.hpp"
#include "launcher_build.hpp"

namespace ob::run {

PathAnswer split_build(const LaunchSetup& setup, const toolchain::frontend::BuildRequest& build,
                       Session& session, Unchanged& why) {
  using namespace toolchain::frontend::unchanged;
  const Request& o = session.options();
  const fs::path& cwd = setup.cwd;
  auto pass = [&](std::string reason, const char* code) {
    why = {std::move(reason), code, {}};
    return PathAnswer{};
  };
  std::error_code ec;
  const fs::path program = (cwd / build.output_arg()).lexically_normal();
  if (!fs::is_directory(program.parent_path(), ec)) return pass("the output's directory does not exist", kPaths);
  if (!setup.toolchain)
    return pass("no LLVM installation (llvm-offload-binary) next to " + setup.compiler.string(), kCompiler);
  const auto memo = session.probe_memo();

  // Each source's compile, as `clang <options> -c SOURCE -o <work>/N-STEM.o`.
  const fs::path work = plan::launcher_work_dir(program);
  std::vector<toolchain::frontend::CompileRequest> compiles;
  std::vector<std::string> objects;
  for (size_t n = 0; n < build.sources.size(); ++n) {
    const fs::path source = build.argv[build.sources[n]];
    const fs::path object = work / fmt::format("{}-{}.o", n + 1, source.stem().string());
    objects.push_back(plan::arg_path(object, cwd).string());
    auto one = setup.frontend->parse(build.compile_argv(n, objects.back()));
    if (!one.compile) {
      why = {"a one-step build: " + one.pass_reason, one.pass_code, one.option};
      return {};
    }
    if (auto unusable = one.compile->unusable_files(cwd)) {
      why = std::move(*unusable);
      return {};
    }
    if (auto not_ready = plan::ready_to_plan(*one.compile, cwd, *setup.toolchain, memo, false)) {
      why = std::move(*not_ready);
      return {};
    }
    compiles.push_back(std::move(*one.compile));
  }
  const auto link = setup.frontend->parse_link(build.link_argv(objects));
  if (!link.link) return pass("a one-step build's link: " + link.pass_reason, kOneStep);
  std::vector<fs::path> link_inputs;
  for (const auto& in : link.link->inputs) {
    const fs::path p = (cwd / in).lexically_normal();
    if (!util::is_under(p, work) && !fs::is_regular_file(p, ec))
      return pass("a one-step build's input " + in + " is not a file", kPaths);
    link_inputs.push_back(p);
  }

  const toolchain::Toolchain& tc = *setup.toolchain;
  std::unique_ptr<toolchain::DriverProbe> probe;
  if (!o.config.flag("two_parse")) probe = toolchain::make_driver_probe(tc, memo);
  plan::Plan plan;
  plan.cwd = cwd;
  plan.program = program;
  plan.build_dir = work;
  plan.directories = {work};
  std::vector<plan::JobId> object_jobs;
  for (size_t n = 0; n < compiles.size(); ++n) {
    const plan::Plan one =
        plan::make_launcher_plan(compiles[n], tc, cwd, probe.get(), probe_jobs(o.config, session.jobserver()));
    if (process::interrupted()) return {std::nullopt, exit_code::interrupted};
    for (plan::JobId id : plan::append_unit(plan, one, n + 1)) object_jobs.push_back(id);
  }
  plan::Job link_job = plan::offload_link_job(*link.link, std::move(link_inputs), program, work, cwd, tc);
  link_job.unit = compiles.size() + 1;
  link_job.deps = object_jobs;
  plan.add(std::move(link_job));
  Split split;
  split.plan = std::move(plan);
  split.project = program.filename().string();
  split.stable_names = true;
  split.verbose = fmt::format("splitting a one-step build into {} compiles and the offload link", compiles.size());
  split.failed = {"a split pass failed: the compiler shows its own diagnostics", kFailed, {}};
  return {std::move(split), std::nullopt};
}

}  // namespace ob::run
