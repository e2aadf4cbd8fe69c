// Launcher mode: one offload compile split into device passes, package and
// host pass (its plan, run by launcher_run.cpp with the kernel cache and the
// make jobserver, leaving exactly the object and depfile the compiler
// would), or served whole from the cache when nothing asks to see its jobs.
#include "launcher_compile.hpp"

#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/cache/whole_compile.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/toolchain/driver_probe.hpp"

namespace ob::run {

namespace {

// A launcher compile served whole (cache/whole_compile.hpp) when nothing asks
// to see its jobs; nullptr when it cannot be, or the cache is off.
std::unique_ptr<cache::WholeCompile> whole_compile(const toolchain::frontend::CompileRequest& req, const LaunchSetup& s,
                                                   const Request& o, Session& session) {
  if (!s.frontend->lists_reads() || o.dry_run || o.config.flag("no_cache") || o.config.flag("explain") || o.config.flag("verbose") || o.report || wants_pictures(o) || req.save_temps ||
      !req.native.empty())
    return nullptr;
  std::error_code ec;
  const fs::path output = (s.cwd / req.output_arg()).lexically_normal();
  if (!fs::is_directory(output.parent_path(), ec)) return nullptr;
  if (auto dep = plan::requested_depfile(req, s.cwd); dep && !fs::is_directory(dep->parent_path(), ec)) return nullptr;
  if (!session.layers()) return nullptr;
  std::vector<std::string> argv = s.argv;
  argv.front() = s.compiler.string();
  plan::Plan plan = plan::make_whole_compile_plan(req, std::move(argv), s.cwd, cache::split_facts(o.config),
                                                  {fs::read_symlink("/proc/self/exe", ec)});
  plan.base_dirs = s.bases;
  plan.name_anchor = s.anchor;
  return std::make_unique<cache::WholeCompile>(*session.layers(), std::move(plan),
                                               cache::system_dirs(session.config().text("system_dirs")));
}

}  // namespace

PathAnswer split_compile(const LaunchSetup& setup, toolchain::frontend::CompileRequest& req, Session& session,
                         Unchanged& why) {
  using namespace toolchain::frontend::unchanged;
  const Request& o = session.options();
  const fs::path& cwd = setup.cwd;
  auto pass = [&](std::string reason, const char* code, std::string option = {}) {
    why = {std::move(reason), code, std::move(option)};
    return PathAnswer{};
  };
  if (auto unusable = req.unusable_files(cwd)) {
    why = std::move(*unusable);
    return {};
  }
  // The whole compile from the cache: nothing else to do.
  auto whole = whole_compile(req, setup, o, session);
  if (whole)
    if (auto said = whole->serve()) {
      std::cerr << *said;
      return {std::nullopt, exit_code::ok};
    }
  const auto memo = session.probe_memo();  // compilers' answers, next to the cache
  if (!setup.toolchain) return pass("no LLVM installation (llvm-offload-binary) next to " + setup.compiler.string(), kCompiler);
  if (auto not_ready = plan::ready_to_plan(req, setup.cwd, *setup.toolchain, memo, true)) {
    why = std::move(*not_ready);
    return {};
  }

  // The driver's own device commands (single parse), remembered next to the cache.
  std::unique_ptr<toolchain::DriverProbe> probe;
  if (!o.config.flag("two_parse")) probe = toolchain::make_driver_probe(*setup.toolchain, memo);
  else if (req.save_temps) return pass("-save-temps with two parses (the driver's listing is not asked for)", kOption, "-save-temps");
  Split split;
  split.project = fs::path(req.output_arg()).filename().string();
  split.failed = {"a split pass failed: the compiler shows its own diagnostics", kFailed, {}};
  if (req.save_temps) {
    // The driver's own commands, each a job, so every temp is clang's.
    auto listing = probe->list(setup.expanded, cwd);
    auto listed = listing ? plan::make_listing_plan(*listing, req, cwd) : Result<plan::Plan>(listing.error());
    if (process::interrupted()) return {std::nullopt, exit_code::interrupted};
    if (!listed) return pass("-save-temps: " + listed.error().message, kOption, "-save-temps");
    split.plan = std::move(*listed);
    if (setup.frontend->compiles(manifest::Language::Fortran))  // its passes write module files
      for (auto& job : split.plan.jobs) job.runs_here = plan::kWritesModules;
    split.verbose = fmt::format("splitting -save-temps into the driver's {} commands", split.plan.jobs.size());
    return {std::move(split), std::nullopt};
  }
  split.plan = plan::make_launcher_plan(req, *setup.toolchain, cwd, probe.get(), probe_jobs(o.config, session.jobserver()));
  if (process::interrupted()) return {std::nullopt, exit_code::interrupted};
  split.stable_names = true;  // flang's too; lookup records only where a depfile lists what was read
  const bool single = split.plan.jobs.front().kind == plan::JobKind::HostIr;
  split.verbose = fmt::format("splitting into {}{} device pass{}, package, host {}", single ? "one host parse, " : "",
                              req.targets.size(), req.targets.size() == 1 ? "" : "es", single ? "codegen" : "pass");
  split.whole = std::move(whole);
  return {std::move(split), std::nullopt};
}

}  // namespace ob::run
