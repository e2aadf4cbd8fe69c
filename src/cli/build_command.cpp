#include <chrono>
#include <iostream>
#include <map>

#include <fmt/core.h>

#include "offload_build/cli/build_context.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/cli/commands.hpp"
#include "offload_build/cache/job_cache.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/process/jobserver.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"  // load_manifest, manifest_options
#include "offload_build/plan/compdb.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/style.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/toolchain/device_runtime_check.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "build_pictures.hpp"
#include "noop_build.hpp"
#include "options.hpp"
#include "summary.hpp"

namespace ob::cli {

fs::path manifest_path(const Request& o) {
  fs::path dir = o.directory;
  if (!o.manifest) return dir / "offload.json";
  return o.manifest->is_absolute() ? *o.manifest : dir / *o.manifest;
}

Error no_manifest(const fs::path& file) {
  return Error::usage(fmt::format(
      "no manifest at {}; `offload-build init DIR` creates a project that builds as is, or write "
      "an offload.json there (docs/MANIFEST.md), or pass -C DIR or --manifest FILE",
      file.string()));
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

namespace {

// What build() keeps for the summary line and --report, however the build ends.
struct BuildSession {
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
  report::BuildRecorder recorder;  // also the build's clock
  std::string project;
  fs::path manifest;
  std::optional<plan::Plan> plan;
  bool cache_enabled = false;
  std::optional<fs::path> cache_dir;
  std::map<plan::JobId, cache::JobCache::MissNote> misses;
  nlohmann::json tools = nlohmann::json::object();
  std::optional<double> seconds;  // the build's time, taken when its jobs ended
  exec::RemoteNotes remote;  // where each job ran, under remote execution
};

report::BuildResult outcome(const Result<fs::path>& result) {
  return result ? report::BuildResult::Ok
         : result.error().code == exit_code::interrupted ? report::BuildResult::Interrupted
                                                         : report::BuildResult::Failed;
}

Result<void> write_build_report(const fs::path& file, const BuildSession& s,
                                const Result<fs::path>& result) {
  report::ReportData d;
  d.project = s.project;
  d.manifest = fs::absolute(s.manifest).lexically_normal();
  d.started = s.started;
  d.duration_s = s.seconds.value_or(s.recorder.elapsed());
  d.result = outcome(result);
  if (!result) d.error = result.error().message;
  d.plan = s.plan ? &*s.plan : nullptr;
  d.recorder = &s.recorder;
  d.cache_enabled = s.cache_enabled;
  d.cache_dir = s.cache_dir;
  d.miss_reason = miss_reasons(s.misses);
  d.execution = remote_execution_of(s.remote);
  d.tools = s.tools;
  return report::write_report(file, report::make_report(d));
}

Result<fs::path> build_steps(const Request& o, BuildSession& session);

}  // namespace

namespace {

// A path setting in force, with the manifest's value in its place.
std::optional<fs::path> path_setting(const config::Config& c, std::string_view key,
                                     const std::optional<fs::path>& manifest) {
  auto v = c.get(key, manifest ? std::optional(manifest->string()) : std::nullopt, "offload.json");
  if (!v || v->text.empty()) return std::nullopt;
  return fs::absolute(v->text);
}

}  // namespace

// The resolved configuration (config::load) holds a value for cache_dir and
// max_size, their defaults written once (the table's "5G", config.cpp's
// computed cache directory), each value checked when it was read: no
// fallback here. A cache_dir set empty names no directory.
fs::path cache_dir_for(const config::Config& c, const std::optional<fs::path>& manifest_cache_dir) {
  return path_setting(c, "cache_dir", manifest_cache_dir).value_or(fs::path());
}

uint64_t max_size_for(const config::Config& c, const std::optional<uint64_t>& manifest_max_size) {
  auto v = c.get("max_size", manifest_max_size ? std::optional(std::to_string(*manifest_max_size)) : std::nullopt,
                 "offload.json");
  auto bytes = util::parse_size(v ? v->text : std::string());
  return bytes ? *bytes : 0;  // as Config::size for a value never set
}

fs::path base_dir_for(const config::Config& c, const std::optional<fs::path>& manifest_base_dir) {
  std::optional<fs::path> dir = path_setting(c, "base_dir", manifest_base_dir);
  if (!dir) return {};
  std::error_code ec;
  fs::path real = fs::canonical(*dir, ec);
  return ec ? fs::path() : real;
}

Result<fs::path> build(const Request& o) {
  BuildSession session;
  auto result = build_steps(o, session);
  if (o.report && !o.dry_run) {
    auto written = write_build_report(fs::absolute(*o.report), session, result);
    if (!written) {
      if (result) return written.error();
      std::cerr << util::paint_diagnostic("offload-build: warning: " + written.error().message)
                << '\n';
    }
  }
  if (wants_pictures(o) && session.plan) {  // none before the plan: nothing to draw
    auto timeline = report::timeline_of(*session.plan, session.recorder, session.project, "manifest",
                                        session.started, outcome(result));
    if (session.seconds) timeline.duration_s = *session.seconds;
    exec::mark_remote(timeline, session.remote);
    write_pictures(o, timeline, session.plan->build_dir / report::kTimingsFileName, false);
  }
  return result;
}

namespace {

// C/C++ compiles name kernels from each file's place relative to the
// project directory (when it lies under the project or the base directory)
// and the project's namespace, its name (docs/CACHE.md).
void use_stable_kernel_names(plan::Plan& plan, const manifest::Manifest& m, const toolchain::Toolchain& tc,
                             const fs::path& base, const std::optional<fs::path>& probe_memo, const config::Config& c) {
  std::error_code ec;
  plan.name_anchor = fs::canonical(m.project_dir, ec);
  if (ec) plan.name_anchor = m.project_dir;
  plan.base_dirs = {plan.name_anchor};
  if (!base.empty() && base != plan.name_anchor) plan.base_dirs.push_back(base);
  if (m.is_rust()) return;
  if (c.flag("stable_names")) {
    auto names =
        toolchain::stable_names_for(tc.clang, toolchain::NameRoots{plan.base_dirs, plan.name_anchor}, probe_memo);
    if (!names) {
      if (std::string why = toolchain::stable_names_unavailable(); !why.empty())
        std::cerr << "offload-build: warning: " << why << '\n';
    } else {
      plan::use_stable_names(plan, *names, toolchain::kernel_salt(m.name));
      if (names->warn()) std::cerr << "offload-build: warning: " << names->fallback << '\n';
      else if (c.flag("verbose") && !names->keyed) std::cerr << "offload-build: " << names->fallback << '\n';
    }
  }
  // For the job cache, which checks them on every hit (none with --no-cache:
  // nothing would read the records), with stable names off too: the library records only.
  if (!c.flag("no_cache")) plan::record_lookups(plan, toolchain::preload_library());
}

Result<fs::path> build_steps(const Request& o, BuildSession& session) {
  // First, before any descriptor of ours is open: make's closed jobserver
  // descriptors must not be mistaken for ours (the signal self-pipe's).
  BuildContext context(o);
  const config::Config& c = o.config;
  process::set_echo_policy({c.flag("verbose"), nullptr});
  const fs::path file = manifest_path(o);
  session.manifest = file;
  if (auto program = noop_build(o, file, [&session] { return session.recorder.elapsed(); }))
    return *program;
  if (!fs::exists(file)) return no_manifest(file);
  auto manifest = manifest::load_manifest(file, toolchain::frontend::manifest_options());
  if (!manifest) return manifest.error();
  session.project = manifest->name;
  if (!o.targets.empty()) OB_TRY(manifest::override_targets(*manifest, o.targets));
  auto toolchain = toolchain::find_toolchain(manifest->toolchain, c.path("llvm"));
  if (!toolchain) return toolchain.error();
  OB_TRY(context.open_cache({manifest->cache_dir, manifest->cache_max_size, manifest->remote_storage},
                            RemoteErrors::Fail));
  // Compilers' answers about themselves are remembered next to the cache
  // (a private, trusted one: a listing planted there would run).
  const std::optional<fs::path> probe_memo = context.probe_memo();
  if (manifest->is_rust()) {
    toolchain::rust::set_probe_memo_dir(probe_memo);  // per rustc binary
    OB_TRY(toolchain::rustc::prepare(*manifest, *toolchain, c.flag("verbose")));
  }

  // The driver's own commands, to split device passes.
  auto driver_probe = toolchain::make_driver_probe(*toolchain, probe_memo);
  plan::PlanOptions plan_options{driver_probe.get(), c.flag("two_parse"), probe_jobs(c, context.jobserver()), nullptr};
  if (c.flag("verbose"))
    plan_options.note = [](const std::string& s) { std::cerr << "offload-build: " << s << '\n'; };
  process::install_signal_handlers();  // Ctrl-C while probing stops the build cleanly
  plan::Plan plan = plan::make_plan(*manifest, *toolchain, plan_options);
  if (process::interrupted()) return Error{"interrupted", exit_code::interrupted};
  use_stable_kernel_names(plan, *manifest, *toolchain, base_dir_for(c, manifest->base_dir), probe_memo, c);
  if (o.compdb) OB_TRY(plan::write_compilation_database(plan));
  if (o.dry_run) {
    std::cout << exec::dry_run_script(plan) << std::flush;
    return plan.program;
  }

  // On a terminal a status line that the commands' output must not tear: the
  // runner buffers their output and the console prints it whole.
  report::ConsoleProgress console(std::cerr, {report::choose_progress_mode(c.flag("quiet")), 0}, &std::cerr);
  report::ProgressTee listeners({&console, &session.recorder});
  // Output is always buffered (as ninja does): printed whole when a job ends,
  // and stored with its outputs so that a cache hit prints its warnings again.
  auto remote = context.remote_runner(plan, BuildContext::RemoteFor::Build, manifest->cache_time_macros);
  if (!remote) return remote.error();
  exec::RemoteRunner* remote_runner = remote->get();
  std::unique_ptr<exec::CommandRunner> runner =
      *remote ? std::unique_ptr<exec::CommandRunner>(std::move(*remote)) : exec::make_process_runner(true);
  BuildContext::RunOptions run;
  run.observer = &listeners;
  run.check_outputs = [&plan](const plan::Job& job, const std::vector<fs::path>& outs) {
    if (!job.forbid_device_runtime_calls || !job.target) return Result<void>{};
    return toolchain::check_device_object(*job.target, plan::arg_path(job.source, plan.cwd), outs.front());
  };
  run.cache.allow_time_macros = manifest->cache_time_macros;
  run.cache.explain = c.flag("explain") ? &std::cerr : nullptr;
  run.cache.replay = [&](const plan::Job& job, std::string_view text) { listeners.job_output(job, text); };
  if (context.layers()) {
    session.cache_enabled = true;
    session.cache_dir = context.cache_dir();
  }
  // A build that fails or is interrupted leaves no no-op record; one that
  // ends with every job current (and nothing else to say) leaves a new one.
  const fs::path noop_file = cache::noop_record_file(manifest->build_dir);
  cache::forget_noop_record(noop_file);
  std::optional<cache::NoopRecord> noop;
  if (noop_eligible(o) && context.storage() && context.storage()->writable() &&
      context.storage()->trusted())
    run.after_cache = [&](const cache::JobCache& cache) {
      noop = cache::make_noop_record(cache.state(), plan, plan_files(*manifest, *toolchain, plan),
                                     build_fingerprint(o), racy_from(session.started));
    };
  auto ran = context.run_plan(plan, *runner, std::move(run));
  auto& summary = ran.summary;
  session.seconds = session.recorder.elapsed();
  if (remote_runner) {
    session.remote = exec::remote_notes(*remote_runner, plan);
    if (c.flag("explain")) exec::explain_remote(plan, session.remote, std::cerr);
  }
  if (o.report || wants_pictures(o)) session.plan = plan;
  if (o.report) {
    session.misses = std::move(ran.misses);
    std::map<fs::path, std::string> known;  // versions we already have
    if (toolchain->rust) known[toolchain->rust->rustc] = toolchain->rust->version_line;
    // After Ctrl-C, run nothing more: the tools' identities only.
    const bool interrupted = !summary && summary.error().code == exit_code::interrupted;
    session.tools = report::describe_tools(plan, known, !interrupted);
  }
  if (!summary) return summary.error();
  print_summary(*summary, *session.seconds, c.flag("quiet"));
  if (remote_runner && !c.flag("quiet")) print_remote_summary(remote_runner->counts());
  if (noop) cache::write_noop_record(noop_file, *noop);
  return plan.program;
}

}  // namespace

}  // namespace ob::cli
