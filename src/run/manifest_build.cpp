// The manifest build (manifest_build.hpp): the manifest, its plan, stable
// kernel names, then the plan run as a Session under kManifest.
#include <chrono>
#include <iostream>
#include <map>

#include <fmt/core.h>

#include "offload_build/run/build_context.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/run/manifest_build.hpp"
#include "offload_build/cache/job_cache.hpp"
#include "offload_build/storage/hash.hpp"
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
#include "offload_build/util/strings.hpp"
#include "offload_build/util/style.hpp"
#include "offload_build/report/timings_html.hpp"
#include "offload_build/toolchain/device_runtime_check.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "noop_build.hpp"
#include "rust_launch_check.hpp"

namespace ob::run {

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

namespace {

// A bad remote URL is a usage error; the build state kept (up-to-date checks, no-op records).
const Policy kManifest{"manifest", RemoteErrors::Fail, true};

Result<fs::path> build_steps(const Request& o, Session& session);

}  // namespace

Result<fs::path> build(const Request& o) {
  Session session(kManifest);
  auto result = build_steps(o, session);
  if (o.report && !o.dry_run)
    OB_TRY(save_report(fs::absolute(*o.report),
                            session.report_data(nullptr, outcome(result), result ? "" : result.error().message),
                            bool(result)));
  if (wants_pictures(o) && session.kept)  // none before the plan: nothing to draw
    write_pictures(o, session.timeline(*session.kept, outcome(result)),
                        session.kept->build_dir / report::kTimingsFileName, false);
  return result;
}

namespace {

// C/C++ compiles name kernels from each file's place relative to the
// project directory (when it lies under the project or the base directory)
// and the project's namespace, its name (docs/CACHE.md).
toolchain::NameRoots kernel_name_roots(const manifest::Manifest& m, const fs::path& base) {
  std::error_code ec;
  toolchain::NameRoots roots;
  roots.anchor = fs::canonical(m.project_dir, ec);
  if (ec) roots.anchor = m.project_dir;
  roots.bases = {roots.anchor};
  if (!base.empty() && base != roots.anchor) roots.bases.push_back(base);
  return roots;
}

// What names the build's working set in the engine (exec/working_set.hpp):
// the manifest, its targets, and each source's place in the project and
// content; the same in every checkout of the same tree, known before the
// plan (the set is fetched while the build plans).
std::string working_set_identity(const manifest::Manifest& m) {
  storage::Hasher h;
  h.field("manifest", util::read_file(m.file).value_or(""));
  for (const auto& t : m.targets) h.field("target", t.short_name());
  for (const auto& source : m.sources) {
    h.field("source", source.path.lexically_relative(m.project_dir).generic_string());
    h.field("content", util::read_file(source.path).value_or(""));
  }
  return h.hex();
}

// What a job wrote, checked before it is committed: a Rust program's
// launches against the kernels its device passes compiled; a GPU object
// built without a device runtime for calls into it.
Result<void> check_outputs(const manifest::Manifest& m, const toolchain::Toolchain& tc, const plan::Plan& plan,
                           const plan::Job& job, const std::vector<fs::path>& outs) {
  if (m.is_rust() && job.kind == plan::JobKind::Link && outs.size() > 1)
    return check_rust_launches(plan, tc, {outs[1]}, {outs[0]}, m.device_cfg);
  if (!job.forbid_device_runtime_calls || !job.target) return {};
  return toolchain::check_device_object(*job.target, plan::arg_path(job.source, plan.cwd), outs.front());
}

void use_stable_kernel_names(plan::Plan& plan, const manifest::Manifest& m, const toolchain::NameRoots& roots,
                             StableNamesQuestion& names, const config::Config& c) {
  plan.name_anchor = roots.anchor;
  plan.base_dirs = roots.bases;
  if (m.is_rust()) return;
  use_stable_names(plan, names.answer(), m.name, c,
                   [](const std::string& why) { std::cerr << "offload-build: warning: " << why << '\n'; });
}

// Why an option list leaves compiles uncached, said once a build (--explain
// says it for each job; cache stats counts them under "uncacheable").
void say_uncached(const plan::Plan& plan, const config::Config& c) {
  if (c.flag("quiet") || c.flag("no_cache")) return;
  std::map<std::string, size_t> why;
  for (const auto& job : plan.jobs)
    if (!job.cacheable && util::starts_with(job.uncacheable_reason, "offload.json")) ++why[job.uncacheable_reason];
  for (const auto& [reason, n] : why)
    std::cerr << fmt::format("offload-build: note: {} compile job{} not cached: {}\n", n, n == 1 ? "" : "s", reason);
}

Result<fs::path> build_steps(const Request& o, Session& session) {
  // First, before any descriptor of ours is open: make's closed jobserver
  // descriptors must not be mistaken for ours (the signal self-pipe's).
  BuildContext context(o);
  const config::Config& c = o.config;
  process::set_echo_policy({c.flag("verbose"), nullptr});
  const fs::path file = manifest_path(o);
  session.manifest = fs::absolute(file).lexically_normal();
  if (auto program = noop_build(o, file, [&session] { return session.recorder.elapsed(); }))
    return *program;
  if (!fs::exists(file)) return no_manifest(file);
  auto manifest = manifest::load_manifest(file, toolchain::frontend::manifest_options());
  if (!manifest) return manifest.error();
  session.project = manifest->name;
  if (!o.targets.empty()) OB_TRY(manifest::override_targets(*manifest, o.targets));
  auto toolchain = toolchain::find_toolchain(manifest->toolchain, c.path("llvm"));
  if (!toolchain) return toolchain.error();
  context.use_working_set([&m = *manifest] { return working_set_identity(m); });
  OB_TRY(session.open_cache(context, {manifest->cache_dir, manifest->cache_max_size, manifest->remote_storage}));
  // The engine opens while the build plans: at once where no driver is
  // probed, else once the probes' threads run (make_plan's `probing`: a
  // thread started while the engine's module loads would wait for the load).
  auto open_engine = [&context, &o] { if (!o.dry_run) context.open_engine_early(); };
  if (manifest->is_rust() || c.flag("two_parse")) open_engine();
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
  plan_options.probing = open_engine;
  if (c.flag("verbose"))
    plan_options.note = [](const std::string& s) { std::cerr << "offload-build: " << s << '\n'; };
  process::install_signal_handlers();  // Ctrl-C while probing stops the build cleanly
  const toolchain::NameRoots roots = kernel_name_roots(*manifest, base_dir_for(c, manifest->base_dir));
  // Rust kernels are named by rustc: nothing to ask.
  StableNamesQuestion names(toolchain->clang, roots, probe_memo, !manifest->is_rust() && c.flag("stable_names"),
                            plan_options.parallel_probes > 1);
  plan::Plan plan = plan::make_plan(*manifest, *toolchain, plan_options);
  open_engine();  // where nothing was probed
  if (process::interrupted()) return Error{"interrupted", exit_code::interrupted};
  use_stable_kernel_names(plan, *manifest, roots, names, c);
  if (o.compdb) OB_TRY(plan::write_compilation_database(plan));
  if (o.dry_run) {
    std::cout << exec::dry_run_script(plan) << std::flush;
    return plan.program;
  }
  say_uncached(plan, c);

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
  run.check_outputs = [&](const plan::Job& job, const std::vector<fs::path>& outs) {
    return check_outputs(*manifest, *toolchain, plan, job, outs);
  };
  run.cache.allow_time_macros = manifest->cache_time_macros;
  run.cache.replay = [&](const plan::Job& job, std::string_view text) { listeners.job_output(job, text); };
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
  auto ran = session.run(context, plan, *runner, std::move(run));
  auto& summary = ran.summary;
  if (o.report || wants_pictures(o)) session.kept = plan;
  if (o.report) {
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

}  // namespace ob::run
