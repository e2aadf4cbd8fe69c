// Launcher mode: one offload compile split into device passes, package and
// host pass, run through the executor with the kernel cache and the make
// jobserver, leaving exactly the object (and depfile) the compiler would;
// and what the one-step build and the link share with it: a ready compile,
// stable kernel names, and the running and reporting of a launcher plan (the
// command is set up once, in launcher.cpp).
#include "launcher_compile.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/cache/whole_compile.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/exec/collecting_runner.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/run/build_context.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/process/jobserver.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/report/compiler_output.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"
#include "launcher_unchanged.hpp"

namespace ob::run {

// Remote errors are warnings, remote warnings once per make/ninja run; no
// build state: many compiles share one object directory.
const Policy kLauncher{"launcher", RemoteErrors::WarnOncePerBuild, false};

// The LLVM installation the compiler is part of (/usr/bin/clang++-22 is
// /usr/lib/llvm-22/bin/clang): its llvm-offload-binary packages the images.
std::optional<toolchain::Toolchain> toolchain_of(const fs::path& compiler) {
  std::error_code ec;
  const fs::path real = fs::canonical(compiler, ec);
  if (ec) return std::nullopt;
  auto tc = toolchain::toolchain_at(real.parent_path().parent_path());
  if (!tc) return std::nullopt;
  return *tc;
}

namespace {

// Runs a launcher plan (not under --dry-run) with the cache and the
// jobserver; nullopt when a job failed. With `record` (--report, the
// pictures), the jobs' events go to the session's recorder. With `whole`,
// the compile's whole entry is stored after it succeeded.
std::optional<int> run_launcher_plan(const plan::Plan& plan, BuildContext& context, Session& session, bool record,
                            cache::WholeCompile* whole) {
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
  auto ran = session.run(context, plan, runner, std::move(run));
  auto& summary = ran.summary;
  // A result of the engine's action cache (any client of the engine may have
  // written it) is kept out of the whole entry unless the engine is trusted.
  bool untrusted = false;
  for (const auto& [id, note] : session.remote)
    untrusted |= note.where == exec::RanWhere::EngineCache && context.engine_cache() != exec::EngineCache::Trusted;
  std::error_code ec;
  fs::remove_all(plan.build_dir, ec);  // device objects and package: the cache has them
  if (!summary && summary.error().code == exit_code::interrupted) return exit_code::interrupted;
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

void open_launcher_cache(BuildContext& context) {
  // Remote errors are warnings here; --dry-run only reads the probe memo.
  if (!context.options().dry_run) (void)context.open_cache({}, kLauncher.remote_errors);
}

bool ready_to_split(toolchain::frontend::CompileRequest& req, const LaunchSetup& s, const toolchain::Toolchain& tc,
                    const std::optional<fs::path>& memo, bool check_output, Unchanged& why) {
  using namespace toolchain::frontend::unchanged;
  auto pass = [&](std::string reason, const char* code) {
    why = {std::move(reason), code, {}};
    return false;
  };
  std::error_code ec;
  if (!req.resolve_natives(tc, memo))
    return pass("no GPU found for the native offload arch: the compiler reports it", kNoGpu);
  const fs::path output = (s.cwd / req.output_arg()).lexically_normal();
  if (check_output && !fs::is_directory(output.parent_path(), ec))
    return pass("the output's directory does not exist", kPaths);
  if (auto dep = plan::requested_depfile(req, s.cwd); dep && !fs::is_directory(dep->parent_path(), ec))
    return pass("the depfile's directory does not exist", kPaths);
  if (req.opt_record && !fs::is_directory((s.cwd / *req.opt_record).lexically_normal().parent_path(), ec))
    return pass("the optimization record's directory does not exist", kPaths);
  return true;
}

std::optional<int> run_and_report(const plan::Plan& plan, BuildContext& context,
                                  const std::vector<std::string>& command, const std::string& project,
                                  cache::WholeCompile* whole) {
  const Request& o = context.options();
  if (o.dry_run) {
    std::cout << exec::dry_run_script(plan) << std::flush;
    return exit_code::ok;
  }
  const bool record = o.report || wants_pictures(o);
  Session session(kLauncher);
  session.project = project;
  auto code = run_launcher_plan(plan, context, session, record, whole);
  if (!code || !record) return code;
  const auto result = *code == 0 ? report::BuildResult::Ok : report::BuildResult::Interrupted;
  if (wants_pictures(o))  // the trace: added to, one file for a whole make/ninja run
    write_pictures(o, session.timeline(plan, result), plan.program.string() + ".timings.html", true);
  if (o.report) write_launcher_report(o, command, report::make_report(session.report_data(&plan, result)), nullptr, *code);
  return code;
}

namespace {

// A launcher compile served whole (cache/whole_compile.hpp) when nothing asks
// to see its jobs; nullptr when it cannot be, or the cache is off.
std::unique_ptr<cache::WholeCompile> whole_compile(const toolchain::frontend::CompileRequest& req, const LaunchSetup& s,
                                                   const Request& o, BuildContext& context) {
  if (!s.frontend->lists_reads() || o.dry_run || o.config.flag("no_cache") || o.config.flag("explain") || o.config.flag("verbose") || o.report || wants_pictures(o) || req.save_temps ||
      !req.native.empty())
    return nullptr;
  std::error_code ec;
  const fs::path output = (s.cwd / req.output_arg()).lexically_normal();
  if (!fs::is_directory(output.parent_path(), ec)) return nullptr;
  if (auto dep = plan::requested_depfile(req, s.cwd); dep && !fs::is_directory(dep->parent_path(), ec)) return nullptr;
  if (!context.layers()) return nullptr;
  std::vector<std::string> argv = s.argv;
  argv.front() = s.compiler.string();
  plan::Plan plan = plan::make_whole_compile_plan(req, std::move(argv), s.cwd, cache::split_facts(o.config),
                                                  {fs::read_symlink("/proc/self/exe", ec)});
  plan.base_dirs = s.bases;
  plan.name_anchor = s.anchor;
  return std::make_unique<cache::WholeCompile>(*context.layers(), std::move(plan),
                                               cache::system_dirs(context.config().text("system_dirs")));
}

}  // namespace

int split_compile(const LaunchSetup& setup, toolchain::frontend::CompileRequest& req,
                  const std::vector<std::string>& command, const Request& o, Unchanged& why) {
  using namespace toolchain::frontend::unchanged;
  const fs::path& cwd = setup.cwd;
  if (auto unusable = req.unusable_files(cwd)) {
    why = std::move(*unusable);
    return -1;
  }
  // Before any descriptor of ours is open: make's closed jobserver
  // descriptors must not be mistaken for the cache's or the signal self-pipe's.
  BuildContext context(o);
  open_launcher_cache(context);
  // The whole compile from the cache: nothing else to do.
  auto whole = whole_compile(req, setup, o, context);
  if (whole)
    if (auto said = whole->serve()) {
      std::cerr << *said;
      return exit_code::ok;
    }
  const auto toolchain = toolchain_of(setup.compiler);
  if (!toolchain)
    return unsplit(why, "no LLVM installation (llvm-offload-binary) next to " + command.front(), kCompiler);
  const auto memo = context.probe_memo();  // compilers' answers, next to the cache
  if (!ready_to_split(req, setup, *toolchain, memo, true, why)) return -1;

  // The driver's own device commands (single parse), remembered next to the cache.
  std::unique_ptr<toolchain::DriverProbe> probe;
  if (!o.config.flag("two_parse")) probe = toolchain::make_driver_probe(*toolchain, memo);
  else if (req.save_temps) return unsplit(why, "-save-temps with two parses (the driver's listing is not asked for)", kOption, "-save-temps");
  process::install_signal_handlers();  // Ctrl-C while probing stops cleanly
  plan::Plan plan;
  if (req.save_temps) {
    // The driver's own commands, each a job, so every temp is clang's.
    auto listing = probe->list(setup.expanded, cwd);
    auto listed = listing ? plan::make_listing_plan(*listing, req, cwd) : Result<plan::Plan>(listing.error());
    if (process::interrupted()) return exit_code::interrupted;
    if (!listed) return unsplit(why, "-save-temps: " + listed.error().message, kOption, "-save-temps");
    plan = std::move(*listed);
    if (o.config.flag("verbose"))
      std::cerr << fmt::format("offload-build: splitting -save-temps into the driver's {} commands\n",
                               plan.jobs.size());
  } else {
    plan = plan::make_launcher_plan(req, *toolchain, cwd, probe.get(), probe_jobs(o.config, context.jobserver()));
    if (process::interrupted()) return exit_code::interrupted;
    // Stable kernel names (flang's too); lookup records only where a depfile lists what was read.
    use_stable_kernel_names(plan, setup, memo, o);
    const bool single = plan.jobs.front().kind == plan::JobKind::HostIr;
    if (o.config.flag("verbose"))
      std::cerr << fmt::format("offload-build: splitting into {}{} device pass{}, package, host {}\n",
                               single ? "one host parse, " : "", req.targets.size(),
                               req.targets.size() == 1 ? "" : "es", single ? "codegen" : "pass");
  }
  if (auto code = run_and_report(plan, context, command, fs::path(req.output_arg()).filename().string(),
                                 req.save_temps ? nullptr : whole.get()))
    return *code;
  return unsplit(why, "a split pass failed: the compiler shows its own diagnostics", kFailed);
}

}  // namespace ob::run
