// Launcher mode: the plan a launcher path made, run as a Flow the same way
// for every path: the passes' output in clang's order, the whole compile
// stored, the compiler's own failure kept as it is. Session::run does the rest.
#include "launcher_run.hpp"

#include <algorithm>
#include <iostream>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/exec/collecting_runner.hpp"
#include "offload_build/report/compiler_output.hpp"
#include "offload_build/run/pictures.hpp"
#include "offload_build/run/session.hpp"
#include "launcher_roots.hpp"
#include "launcher_unchanged.hpp"

namespace ob::run {

namespace {

// Remote errors are warnings, remote warnings once per make/ninja run; no
// build state: many compiles share one object directory; the compiles of
// a make run add to one trace; no summary: the compiler's output only.
const Policy kLauncher{"launcher", RemoteErrors::WarnOncePerBuild, false, false, Policy::Remote::LauncherCompile,
                       false, false, true};

class LauncherFlow final : public Flow {
 public:
  LauncherFlow(const LauncherPath& path, const LaunchSetup& setup, const std::vector<std::string>& command)
      : path_(path), setup_(setup), command_(command) {}
  const Policy& policy() const override { return kLauncher; }
  // The compile's exit code; nullopt: it runs unchanged (the path or split_->failed says why).
  std::optional<int> code() const { return code_; }
  // The path's plan; nullptr when it made none (it said why, or was done).
  const Split* split() const { return split_ ? &*split_ : nullptr; }

  Result<plan::Plan*> plan(Session& session, KernelNames& names) override {
    const Request& o = session.options();
    auto answer = path_(session);
    if (answer.done) code_ = *answer.done;  // served whole, or interrupted
    if (!answer.split) return nullptr;
    split_ = std::move(answer.split);
    plan::Plan& plan = split_->plan;
    session.project = split_->project;
    record_ = o.report || wants_pictures(o);
    if (split_->stable_names) names = launcher_kernel_names(setup_.compiler, setup_.bases, setup_.anchor, session, plan);
    else names.mode = KernelNames::Mode::LookupsOnly;  // only where a depfile lists what was read
    if (o.config.flag("verbose") && !split_->verbose.empty()) std::cerr << "offload-build: " << split_->verbose << '\n';
    if (o.dry_run) code_ = exit_code::ok;
    return &plan;
  }

  // With remote_execution: the jobs that go run on the engine (opened on the
  // first of them: a compile whose jobs all hit loads no client).
  Result<std::unique_ptr<exec::CommandRunner>> runner(std::unique_ptr<exec::RemoteRunner> remote) override {
    auto runner = std::make_unique<exec::CollectingRunner>(std::move(remote));
    runner_ = runner.get();
    return std::unique_ptr<exec::CommandRunner>(std::move(runner));
  }

  void options(Session&, RunOptions& run) override {
    run.observer = record_ ? nullptr : &silent_;  // the passes' output is printed after, in clang's order
    // A hit prints the warnings its pass printed when it ran, in their place.
    run.cache.replay = [this](const plan::Job& job, std::string_view text) { runner_->output[job.id] = std::string(text); };
    run.cache.collect_reads = split_->whole != nullptr;
    // A job served by the engine's layer (any client of the engine may have
    // written its entries), or built from one, keeps the whole entry out too.
    run.after_cache = [this](const cache::JobCache& cache) { untrusted_ |= cache.confined(); };
  }

  Result<void> after_run(Session& session, Ran& ran) override;
  bool ran() const { return ran_; }

  bool reported() const override { return record_ && code_.has_value(); }
  fs::path timings_page(const plan::Plan& plan) const override { return plan.program.string() + ".timings.html"; }
  void report(nlohmann::json& r) const override { launcher_report_section(r, command_, nullptr, code_.value_or(1)); }

 private:
  const LauncherPath& path_;
  std::optional<Split> split_;
  const LaunchSetup& setup_;
  const std::vector<std::string>& command_;
  exec::CollectingRunner* runner_ = nullptr;
  report::Progress silent_;
  bool record_ = false;
  bool untrusted_ = false;
  bool ran_ = false;  // after_run was reached
  std::optional<int> code_;
};

Result<void> LauncherFlow::after_run(Session& session, Ran& ran) {
  ran_ = true;
  const plan::Plan& plan = split_->plan;
  const bool verbose = session.config().flag("verbose");
  auto& summary = ran.summary;
  // A result of the engine's action cache (any client of the engine may have
  // written it) is kept out of the whole entry unless the engine is trusted.
  for (const auto& [id, note] : session.remote_notes())
    untrusted_ |= note.where == report::RanWhere::EngineCache && session.engine_cache() != exec::EngineCache::Trusted;
  std::error_code ec;
  fs::remove_all(plan.build_dir, ec);  // device objects and package: the cache has them
  auto end = [this](int code) -> Result<void> {
    code_ = code;
    if (code == exit_code::ok) return {};
    return Error{"", code};  // what it printed says it
  };
  if (!summary && summary.error().code == exit_code::interrupted) return end(exit_code::interrupted);
  // The compiler failed: its own output and exit code. Had it succeeded and
  // the job still failed (no object or depfile where it said, a lookup it
  // raced), the compile runs unchanged: never fail where the compiler would not.
  if (!summary && split_->failure_is_final && plan.jobs.size() == 1 && runner_->exit_codes.count(0) &&
      runner_->exit_codes[0] != 0) {
    std::cerr << report::in_clang_order(plan, runner_->output);
    return end(runner_->exit_codes[0]);
  }
  if (!summary && !verbose) return summary.error();
  const std::string said = report::in_clang_order(plan, runner_->output);
  std::cerr << said;
  if (!summary) {
    std::cerr << "offload-build: " << summary.error().message << '\n';
    return summary.error();
  }
  // Every compile named its kernels from stable names: keyed without inodes.
  const bool stable = std::all_of(plan.jobs.begin(), plan.jobs.end(),
                                  [](const plan::Job& j) { return !j.inode_sensitive || j.stable_names; });
  if (split_->whole && ran.reads && stable && !untrusted_) split_->whole->store(std::move(*ran.reads), said, plan.jobs.size());
  return end(exit_code::ok);
}

}  // namespace

std::optional<int> run_path(const LauncherPath& path, const LaunchSetup& setup, Session& session,
                            const std::vector<std::string>& command, Unchanged& why) {
  LauncherFlow flow(path, setup, command);
  auto ran = session.run(flow);
  if (!flow.code()) {
    if (!ran && ran.error().code == exit_code::interrupted) return exit_code::interrupted;
    if (!flow.split()) return std::nullopt;  // the path said why
    // The engine's runner could not be had (a missing client module): said, and the compile runs unchanged.
    if (!ran && !flow.ran()) std::cerr << "offload-build: " << ran.error().message << '\n';
    why = flow.split()->failed;
    return std::nullopt;
  }
  return flow.code();
}

}  // namespace ob::run
