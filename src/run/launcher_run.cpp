// Launcher mode: the plan a launcher path made, run the same way for every
// path: stable kernel names, the cache and the jobserver, the passes' output
// in clang's order, the whole compile stored, the --report and the pictures.
#include "launcher_run.hpp"

#include <algorithm>
#include <iostream>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/exec/collecting_runner.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/report/compiler_output.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/run/build_context.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::run {

namespace {

// Remote errors are warnings, remote warnings once per make/ninja run; no
// build state: many compiles share one object directory.
const Policy kLauncher{"launcher", RemoteErrors::WarnOncePerBuild, false};

void use_stable_kernel_names(plan::Plan& plan, const LaunchSetup& setup, const std::optional<fs::path>& memo,
                             const Request& o) {
  plan.base_dirs = setup.bases;
  plan.name_anchor = setup.anchor;
  // A fault (the library out of reach, or not loaded): a warning once per build.
  auto warn_once = [&o](const std::string& why) {
    if (o.config.flag("no_cache") || first_in_build(cache_dir_for(o.config, std::nullopt), "stable-names"))
      std::cerr << "offload-build: warning: " << why << '\n';
  };
  use_stable_names(plan, setup.compiler, o.config.text("kernel_namespace"), memo, o.config, warn_once);
}

// Runs a launcher plan (not under --dry-run) with the cache and the
// jobserver; nullopt when a job failed (with `failure_is_final`, the one
// job's exit code after what it printed). With `record` (--report, the
// pictures), the jobs' events go to the session's recorder. With `whole`,
// the compile's whole entry is stored after it succeeded.
std::optional<int> run_launcher_plan(const plan::Plan& plan, BuildContext& context, Session& session, bool record,
                                     cache::WholeCompile* whole, bool failure_is_final) {
  const Request& o = context.options();
  open_launcher_cache(context);
  // With remote_execution: the jobs that go run on the engine (opened on the
  // first of them: a compile whose jobs all hit loads no client).
  auto remote = context.remote_runner(plan, BuildContext::RemoteFor::LauncherCompile);
  if (!remote) {
    std::cerr << "offload-build: " << remote.error().message << '\n';
    return std::nullopt;
  }
  exec::CollectingRunner runner(std::move(*remote));
  report::Progress silent;  // the passes' output is printed below, in clang's order
  BuildContext::RunOptions run;
  run.observer = record ? nullptr : &silent;
  // A hit prints the warnings its pass printed when it ran, in their place.
  run.cache.replay = [&](const plan::Job& job, std::string_view text) { runner.output[job.id] = std::string(text); };
  run.cache.collect_reads = whole != nullptr;
  // A job served by the engine's layer (any client of the engine may have
  // written its entries), or built from one, keeps the whole entry out too.
  bool untrusted = false;
  run.after_cache = [&untrusted](const cache::JobCache& cache) { untrusted |= cache.confined(); };
  auto ran = session.run(context, plan, runner, std::move(run));
  auto& summary = ran.summary;
  // A result of the engine's action cache (any client of the engine may have
  // written it) is kept out of the whole entry unless the engine is trusted.
  for (const auto& [id, note] : session.remote)
    untrusted |= note.where == exec::RanWhere::EngineCache && context.engine_cache() != exec::EngineCache::Trusted;
  std::error_code ec;
  fs::remove_all(plan.build_dir, ec);  // device objects and package: the cache has them
  if (!summary && summary.error().code == exit_code::interrupted) return exit_code::interrupted;
  // The compiler failed: its own output and exit code. Had it succeeded and
  // the job still failed (no object or depfile where it said, a lookup it
  // raced), the compile runs unchanged: never fail where the compiler would not.
  if (!summary && failure_is_final && plan.jobs.size() == 1 && runner.exit_codes.count(0) &&
      runner.exit_codes[0] != 0) {
    std::cerr << report::in_clang_order(plan, runner.output);
    return runner.exit_codes[0];
  }
  if (!summary && !o.config.flag("verbose")) return std::nullopt;
  const std::string said = report::in_clang_order(plan, runner.output);
  std::cerr << said;
  if (!summary) {
    std::cerr << "offload-build: " << summary.error().message << '\n';
    return std::nullopt;
  }
  // Every compile named its kernels from stable names: keyed without inodes.
  const bool stable = std::all_of(plan.jobs.begin(), plan.jobs.end(),
                                  [](const plan::Job& j) { return !j.inode_sensitive || j.stable_names; });
  if (whole && ran.reads && stable && !untrusted) whole->store(std::move(*ran.reads), said, plan.jobs.size());
  return exit_code::ok;
}

}  // namespace

void open_launcher_cache(BuildContext& context) {
  // Remote errors are warnings here; --dry-run only reads the probe memo.
  if (!context.options().dry_run) (void)context.open_cache({}, kLauncher.remote_errors);
}

std::optional<int> run_split(Split& split, const LaunchSetup& setup, BuildContext& context,
                             const std::vector<std::string>& command, Unchanged& why) {
  const Request& o = context.options();
  plan::Plan& plan = split.plan;
  // Stable kernel names (flang's too); lookup records only where a depfile lists what was read.
  if (split.stable_names) use_stable_kernel_names(plan, setup, context.probe_memo(), o);
  else if (!o.config.flag("no_cache")) plan::record_lookups(plan, toolchain::preload_library());
  if (o.config.flag("verbose") && !split.verbose.empty()) std::cerr << "offload-build: " << split.verbose << '\n';
  process::install_signal_handlers();  // Ctrl-C stops the run cleanly
  if (o.dry_run) {
    std::cout << exec::dry_run_script(plan) << std::flush;
    return exit_code::ok;
  }
  const bool record = o.report || wants_pictures(o);
  Session session(kLauncher);
  session.project = split.project;
  auto code = run_launcher_plan(plan, context, session, record, split.whole.get(), split.failure_is_final);
  if (!code) {
    why = split.failed;
    return std::nullopt;
  }
  if (!record) return code;
  const auto result = *code == 0                      ? report::BuildResult::Ok
                      : *code == exit_code::interrupted ? report::BuildResult::Interrupted
                                                        : report::BuildResult::Failed;
  if (wants_pictures(o))  // the trace: added to, one file for a whole make/ninja run
    write_pictures(o, session.timeline(plan, result), plan.program.string() + ".timings.html", true);
  if (o.report) write_launcher_report(o, command, report::make_report(session.report_data(&plan, result)), nullptr, *code);
  return code;
}

}  // namespace ob::run
