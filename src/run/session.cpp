// One run of a flow (session.hpp): prepare, open the cache, plan, name the
// kernels, run, then the summary, the report and the pictures.
#include "offload_build/run/session.hpp"

#include <iostream>

#include <fmt/core.h>

#include "offload_build/process/interrupt.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/run/kernel_names.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/style.hpp"

namespace ob::run {

namespace {

// "offload-build: 13 jobs: 10 from cache, 3 run in 1.42 s" (the prefix colored
// on a terminal, ", N up to date" when some were).
void print_summary(const exec::ExecSummary& s, double seconds) {
  std::string line = fmt::format("{} jobs: {} from cache, {} run", s.jobs_total, s.jobs_served, s.jobs_run);
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

void name_kernels(plan::Plan& plan, KernelNames& names, const config::Config& c) {
  switch (names.mode) {
    case KernelNames::Mode::None: return;
    case KernelNames::Mode::LookupsOnly:
      if (!c.flag("no_cache")) plan::record_lookups(plan, toolchain::preload_library());
      return;
    case KernelNames::Mode::Stable:
      use_stable_names(plan, names.answer ? names.answer() : std::nullopt, names.salt, c, names.warn);
      return;
  }
}

}  // namespace

std::string Flow::script(const plan::Plan& plan) const { return exec::dry_run_script(plan); }

fs::path Flow::timings_page(const plan::Plan& plan) const { return plan.build_dir / report::kTimingsFileName; }

Result<void> Session::run(Flow& flow) {
  const Policy& policy = flow.policy();
  process::install_signal_handlers();  // Ctrl-C while planning or running stops cleanly
  auto prepared = flow.prepare(*this);
  Result<void> result;
  plan::Plan* plan = nullptr;
  if (!prepared) {
    result = prepared.error();
  } else if (prepared->done) {  // nothing to run: its summary
    if (!config().flag("quiet")) print_summary(*prepared->done, elapsed());
  } else if (auto opened = options_.dry_run && !policy.cache_in_dry_run ? Result<void>{}
                                                                         : open_cache(policy, prepared->project);
             !opened) {
    result = opened.error();
  } else {
    KernelNames names;
    auto planned = flow.plan(*this, names);
    if (!planned) result = planned.error();
    else if ((plan = *planned)) result = run_planned(flow, *plan, names);
    else result = flow.run_alone(*this);
  }
  if (!options_.dry_run && flow.reported())
    if (auto finished = finish(flow, plan, result); result && !finished) result = finished.error();
  return result;
}

Result<void> Session::run_planned(Flow& flow, plan::Plan& plan, KernelNames& names) {
  const Policy& policy = flow.policy();
  if (process::interrupted()) return Error{"interrupted", exit_code::interrupted};
  name_kernels(plan, names, config());
  if (options_.dry_run) {
    std::cout << flow.script(plan) << std::flush;
    return {};
  }
  auto remote = remote_runner(plan, policy.remote);
  if (!remote) return remote.error();
  exec::RemoteRunner* engine = remote->get();
  auto runner = flow.runner(std::move(*remote));
  if (!runner) return runner.error();
  RunOptions run;
  flow.options(*this, run);
  if (!run.observer) run.observer = &recorder_;
  run.cache.keep_build_state = policy.keep_build_state;
  run.cache.explain = config().flag("explain") ? &std::cerr : nullptr;
  Ran ran = run_plan(plan, **runner, std::move(run));
  seconds_ = recorder_.elapsed();
  misses_ = std::move(ran.misses);
  if (engine) {
    remote_notes_ = exec::remote_notes(*engine, plan);
    if (config().flag("explain")) report::explain_remote(plan, remote_notes_, std::cerr);
  }
  if (options_.report) {  // after Ctrl-C, run nothing more: the tools' identities only
    const bool interrupted = !ran.summary && ran.summary.error().code == exit_code::interrupted;
    tools_ = report::describe_tools(plan, flow.known_tools(), !interrupted);
  }
  auto result = flow.after_run(*this, ran);
  if (result && ran.summary && policy.summary && !config().flag("quiet")) {
    print_summary(*ran.summary, *seconds_);
    if (engine) print_remote_summary(engine->counts());
  }
  return result;
}

// --report and the pictures, however the run ended (none before a plan: nothing to draw).
Result<void> Session::finish(Flow& flow, const plan::Plan* plan, const Result<void>& result) {
  const Policy& policy = flow.policy();
  const report::BuildResult end = outcome(result);
  if (options_.report) {
    auto r = report::make_report(report_data(plan, end, result ? "" : result.error().message));
    flow.report(r);
    auto written = report::write_report(fs::absolute(*options_.report), r);
    if (!written) {
      // A failure to write is the run's error when it succeeded (a launcher compile's: a warning).
      if (result && policy.report_is_result) return written.error();
      std::cerr << util::paint_diagnostic("offload-build: warning: " + written.error().message) << '\n';
    }
  }
  if (!wants_pictures(options_)) return {};
  if (!plan) {  // a flow without a plan: its own picture, on no page of its own
    if (auto timeline = flow.timeline()) write_pictures(options_, *timeline, {}, policy.append_trace);
    return {};
  }
  auto timeline = report::timeline_of(*plan, recorder_, project, policy.flow, started_, end);
  if (seconds_) timeline.duration_s = *seconds_;
  report::mark_remote(timeline, remote_notes_);
  flow.draw(timeline);
  write_pictures(options_, timeline, flow.timings_page(*plan), policy.append_trace);
  return {};
}

report::ReportData Session::report_data(const plan::Plan* plan, report::BuildResult result,
                                        const std::string& error) const {
  report::ReportData d;
  d.project = project;
  d.manifest = manifest;
  d.started = started_;
  d.duration_s = seconds_.value_or(recorder_.elapsed());
  d.result = result;
  d.error = error;
  d.plan = plan;
  d.recorder = &recorder_;
  d.cache_enabled = layers_.has_value();
  if (d.cache_enabled) d.cache_dir = cache_dir_;
  d.miss_reason = [this](const plan::Job& job) -> std::optional<report::MissReason> {
    auto it = misses_.find(job.id);
    if (it == misses_.end()) return std::nullopt;
    return report::MissReason{it->second.reason, it->second.detail};
  };
  d.execution = report::remote_execution_of(remote_notes_);
  d.tools = tools_;
  return d;
}

}  // namespace ob::run
