// One run of a plan for every flow (session.hpp): run, keep, report, draw.
#include "offload_build/run/session.hpp"

#include <iostream>

#include <fmt/core.h>

#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/style.hpp"

namespace ob::run {

BuildContext::Ran Session::run(BuildContext& context, const plan::Plan& plan, exec::CommandRunner& runner,
                               BuildContext::RunOptions options) {
  if (!options.observer) options.observer = &recorder;
  options.cache.keep_build_state = policy.keep_build_state;
  options.cache.explain = context.config().flag("explain") ? &std::cerr : nullptr;
  auto ran = context.run_plan(plan, runner, std::move(options));
  seconds = recorder.elapsed();
  misses = std::move(ran.misses);
  cache_enabled = context.layers() != nullptr;
  if (cache_enabled) cache_dir = context.cache_dir();
  if (const exec::RemoteRunner* remote_runner = runner.remote()) {
    remote = exec::remote_notes(*remote_runner, plan);
    if (context.config().flag("explain")) exec::explain_remote(plan, remote, std::cerr);
  }
  return ran;
}

report::ReportData Session::report_data(const plan::Plan* plan, report::BuildResult result,
                                        const std::string& error) const {
  report::ReportData d;
  d.project = project;
  d.manifest = manifest;
  d.started = started;
  d.duration_s = seconds.value_or(recorder.elapsed());
  d.result = result;
  d.error = error;
  d.plan = plan ? plan : kept ? &*kept : nullptr;
  d.recorder = &recorder;
  d.cache_enabled = cache_enabled;
  d.cache_dir = cache_dir;
  d.miss_reason = miss_reasons(misses);
  d.execution = exec::remote_execution_of(remote);
  d.tools = tools;
  return d;
}

report::Timeline Session::timeline(const plan::Plan& plan, report::BuildResult result) const {
  auto t = report::timeline_of(plan, recorder, project, policy.flow, started, result);
  if (seconds) t.duration_s = *seconds;
  exec::mark_remote(t, remote);
  return t;
}

void use_stable_names(plan::Plan& plan, const fs::path& compiler, const std::string& salt,
                      const std::optional<fs::path>& probe_memo, const config::Config& c,
                      const std::function<void(const std::string&)>& warn) {
  std::optional<toolchain::StableNames> names;
  if (c.flag("stable_names"))
    names = toolchain::stable_names_for(compiler, toolchain::NameRoots{plan.base_dirs, plan.name_anchor}, probe_memo);
  use_stable_names(plan, std::move(names), salt, c, warn);
}

void use_stable_names(plan::Plan& plan, std::optional<toolchain::StableNames> names, const std::string& salt,
                      const config::Config& c, const std::function<void(const std::string&)>& warn) {
  if (c.flag("stable_names")) {
    if (!names) {
      if (std::string why = toolchain::stable_names_unavailable(); !why.empty()) warn(why);
    } else {
      plan::use_stable_names(plan, *names, toolchain::kernel_salt(salt));
      if (names->warn()) warn(names->fallback);
      else if (c.flag("verbose") && !names->keyed) std::cerr << "offload-build: " << names->fallback << '\n';
    }
  }
  // For the job cache, which checks them on every hit (none with --no-cache:
  // nothing would read the records), with stable names off too: the library records only.
  if (!c.flag("no_cache")) plan::record_lookups(plan, toolchain::preload_library());
  plan::name_working_dir(plan);  // flang's source names: as its kernel names, alike in every checkout
}

StableNamesQuestion::StableNamesQuestion(const fs::path& compiler, const toolchain::NameRoots& roots,
                                         const std::optional<fs::path>& probe_memo, bool wanted,
                                         bool parallel) {
  if (!wanted) {
    std::promise<std::optional<toolchain::StableNames>> none;
    answer_ = none.get_future();
    none.set_value(std::nullopt);
    return;
  }
  answer_ = std::async(parallel ? std::launch::async : std::launch::deferred,
                       [compiler, roots, probe_memo] { return toolchain::stable_names_for(compiler, roots, probe_memo); });
}

Result<void> save_report(const fs::path& file, const report::ReportData& data, bool ok) {
  auto written = report::write_report(file, report::make_report(data));
  if (!written) {
    if (ok) return written.error();
    std::cerr << util::paint_diagnostic("offload-build: warning: " + written.error().message) << '\n';
  }
  return {};
}

void print_summary(const exec::ExecSummary& s, double seconds, bool quiet) {
  if (quiet) return;
  std::string line = fmt::format("{} jobs: {} from cache, {} run", s.jobs_total, s.jobs_served,
                                 s.jobs_run);
  if (s.jobs_up_to_date) line += fmt::format(", {} up to date", s.jobs_up_to_date);
  std::cerr << util::paint(util::Style::Summary, "offload-build:") << ' ' << line
            << fmt::format(" in {:.2f} s", seconds) << '\n';
}

// Where the jobs ran, after a build with remote_execution.
void print_remote_summary(const exec::RemoteRunner::Counts& c) {
  std::cerr << util::paint(util::Style::Summary, "offload-build:") << ' '
            << fmt::format("remote execution: {} executed, {} from the engine's cache, {} run locally "
                           "after all, {} local; {} uploaded",
                           c.remote, c.engine_cache, c.fallback, c.local, util::format_bytes(c.uploaded_bytes))
            << (c.scans_skipped ? fmt::format("; {} without a dependency scan", c.scans_skipped) : "")
            << (c.scan_runs ? fmt::format("; {} dependency scans in {} runs of clang-scan-deps", c.scans_batched,
                                          c.scan_runs)
                            : "")
            << '\n';
}

std::function<std::optional<report::MissReason>(const plan::Job&)> miss_reasons(
    const std::map<plan::JobId, cache::JobCache::MissNote>& misses) {
  return [&misses](const plan::Job& job) -> std::optional<report::MissReason> {
    auto it = misses.find(job.id);
    if (it == misses.end()) return std::nullopt;
    return report::MissReason{it->second.reason, it->second.detail};
  };
}

}  // namespace ob::run
