// The manifest build (manifest_build.hpp) as a Flow: the no-op record first,
// the manifest and its toolchain, the plan, then the no-op record of a build
// that ended with every job current. Session::run does the rest.
#include "offload_build/run/manifest_build.hpp"

#include <iostream>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/plan/compdb.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/run/kernel_names.hpp"
#include "offload_build/run/session.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"  // load_manifest, manifest_options
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "manifest_parts.hpp"
#include "noop_build.hpp"

namespace ob::run {

namespace {

// A bad remote URL is a usage error; the build state kept (up-to-date
// checks, no-op records); --dry-run opens the cache (its probe memo).
const Policy kManifest{"manifest", RemoteErrors::Fail, true, true, Policy::Remote::Build, true, true, false};

class ManifestFlow final : public Flow {
 public:
  explicit ManifestFlow(const Request& o) : o_(o), c_(o.config) {}
  const Policy& policy() const override { return kManifest; }
  const fs::path& program() const { return program_; }

  Result<Prepared> prepare(Session& session) override {
    process::set_echo_policy({c_.flag("verbose"), nullptr});
    const fs::path file = manifest_path(o_);
    session.manifest = fs::absolute(file).lexically_normal();
    if (auto noop = noop_build(o_, file)) {
      program_ = noop->program;
      return Prepared{{}, noop->summary};
    }
    if (!fs::exists(file)) return no_manifest(file);
    auto manifest = manifest::load_manifest(file, toolchain::frontend::manifest_options());
    if (!manifest) return manifest.error();
    m_ = std::move(*manifest);
    session.project = m_->name;
    if (!o_.targets.empty()) OB_TRY(manifest::override_targets(*m_, o_.targets));
    if (auto tc = toolchain::find_toolchain(m_->toolchain, c_.path("llvm")); tc) tc_ = std::move(*tc);
    else return tc.error();
    session.use_working_set([&m = *m_] { return working_set_identity(m); });
    return Prepared{{m_->cache_dir, m_->cache_max_size, m_->remote_storage}, std::nullopt};
  }

  Result<plan::Plan*> plan(Session& session, KernelNames& names) override {
    // The engine opens while the build plans: at once where no driver is
    // probed, else once the probes' threads run (make_plan's `probing`: a
    // thread started while the engine's module loads would wait for the load).
    auto open_engine = [&session, this] { if (!o_.dry_run) session.open_engine_early(); };
    if (m_->is_rust() || c_.flag("two_parse")) open_engine();
    // Compilers' answers about themselves are remembered next to the cache.
    const std::optional<fs::path> memo = session.probe_memo();
    if (m_->is_rust()) {
      toolchain::rust::set_probe_memo_dir(memo);  // per rustc binary
      OB_TRY(toolchain::rustc::prepare(*m_, *tc_, c_.flag("verbose")));
    }
    auto driver_probe = toolchain::make_driver_probe(*tc_, memo);
    plan::PlanOptions options{driver_probe.get(), c_.flag("two_parse"), probe_jobs(c_, session.jobserver()), nullptr, {}};
    options.probing = open_engine;
    if (c_.flag("verbose")) options.note = [](const std::string& s) { std::cerr << "offload-build: " << s << '\n'; };
    const toolchain::NameRoots roots = kernel_name_roots(*m_, base_dir_for(c_, m_->base_dir));
    auto question = std::make_shared<StableNamesQuestion>(  // Rust kernels are named by rustc: nothing to ask
        tc_->clang, roots, memo, !m_->is_rust() && c_.flag("stable_names"), options.parallel_probes > 1);
    plan_ = plan::make_plan(*m_, *tc_, options);
    program_ = plan_->program;
    open_engine();  // where nothing was probed
    plan_->name_anchor = roots.anchor;
    plan_->base_dirs = roots.bases;
    if (!m_->is_rust())
      names = {KernelNames::Mode::Stable, [question] { return question->answer(); }, m_->name,
               [](const std::string& why) { std::cerr << "offload-build: warning: " << why << '\n'; }};
    if (o_.compdb) OB_TRY(plan::write_compilation_database(*plan_));
    if (!o_.dry_run) say_uncached(*plan_, c_);
    return &*plan_;
  }

  // Output is always buffered (as ninja's): printed whole when a job ends, and
  // stored with its outputs (a hit prints its warnings again).
  Result<std::unique_ptr<exec::CommandRunner>> runner(std::unique_ptr<exec::RemoteRunner> remote) override {
    if (remote) return std::unique_ptr<exec::CommandRunner>(std::move(remote));
    return exec::make_process_runner(true);
  }

  void options(Session& session, RunOptions& run) override {
    // On a terminal a status line that the commands' output must not tear.
    console_.emplace(std::cerr, report::ConsoleOptions{report::choose_progress_mode(c_.flag("quiet")), 0}, &std::cerr);
    listeners_.emplace(std::vector<report::Progress*>{&*console_, &session.recorder()});
    run.observer = &*listeners_;
    run.check_outputs = [this](const plan::Job& job, const std::vector<fs::path>& outs) {
      return check_outputs(*m_, *tc_, *plan_, job, outs);
    };
    run.cache.allow_time_macros = m_->cache_time_macros;
    run.cache.replay = [this](const plan::Job& job, std::string_view text) { listeners_->job_output(job, text); };
    // A build that fails or is interrupted leaves no no-op record; one that
    // ends with every job current (and nothing else to say) leaves a new one.
    noop_file_ = cache::noop_record_file(m_->build_dir);
    cache::forget_noop_record(noop_file_);
    if (noop_eligible(o_) && session.storage() && session.storage()->writable() && session.storage()->trusted())
      run.after_cache = [this, started = session.started()](const cache::JobCache& cache) {
        noop_ = cache::make_noop_record(cache.state(), *plan_, plan_files(*m_, *tc_, *plan_), build_fingerprint(o_),
                                        racy_from(started));
      };
  }

  Result<void> after_run(Session&, Ran& ran) override {
    if (!ran.summary) return ran.summary.error();
    program_ = plan_->program;
    if (noop_) cache::write_noop_record(noop_file_, *noop_);
    return {};
  }

  std::map<fs::path, std::string> known_tools() const override {  // versions we already have
    if (!tc_ || !tc_->rust) return {};
    return {{tc_->rust->rustc, tc_->rust->version_line}};
  }

 private:
  const Request& o_;
  const config::Config& c_;
  std::optional<manifest::Manifest> m_;
  std::optional<toolchain::Toolchain> tc_;
  std::optional<plan::Plan> plan_;
  fs::path program_;
  std::optional<report::ConsoleProgress> console_;
  std::optional<report::ProgressTee> listeners_;
  fs::path noop_file_;
  std::optional<cache::NoopRecord> noop_;
};

}  // namespace

Result<fs::path> build(const Request& o) {
  Session session(o);  // first: make's closed jobserver descriptors are not ours
  ManifestFlow flow(o);
  OB_TRY(session.run(flow));
  return flow.program();
}

}  // namespace ob::run
