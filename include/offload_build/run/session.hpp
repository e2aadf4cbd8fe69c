// One build (ccache's Context, ninja's Builder): what it needs, made once at
// its start (the settings in force, make's jobserver, the local cache and
// remote storage layered over it, the engine and its runner, one clock), and
// the one `run(Flow&)` that every flow goes through: the manifest build, a
// launcher compile, link or one-step build, a command run unchanged (a flow
// without a plan), the cargo flow. A Flow states
// only what differs (its policy, its plan, its runner, what it records after
// the run); Session does the rest once, however the run ends: signals, the
// cache opened as the policy says, stable kernel names, the dry-run script,
// the plan run with the job cache serving and storing each job, --explain,
// the report, the pictures, the tools, the summary and the remote summary.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/exec/remote/runner.hpp"
#include "offload_build/process/jobserver.hpp"
#include "offload_build/report/build_report.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/report/timeline.hpp"
#include "offload_build/run/request.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::exec {
class EngineLink;
class WorkingSet;
}  // namespace ob::exec

namespace ob::run {

// What a project's manifest adds to the settings (a launcher compile has none).
struct ProjectSettings {
  std::optional<fs::path> cache_dir;
  std::optional<uint64_t> max_size;
  std::vector<std::string> remote_storage;
};

// The local cache the settings name (no manifest: launcher mode), opened as
// a build opens it (its size, its trust), for its directory and counters.
storage::Storage local_cache(const config::Config& config);

enum class RemoteErrors {
  Fail,  // a bad remote URL stops the build (the manifest build: a usage error)
  Warn,  // said, and the build goes on without remotes (the cargo flow)
  // Launcher mode: said, and the compile goes on without remotes; remote
  // warnings once per make/ninja run, not once per compile.
  WarnOncePerBuild,
  // No remote storage opened: the local cache for its counters and notes (a
  // command run unchanged reads and stores nothing).
  LocalOnly,
};

// What differs between the flows in running a plan, stated once by each.
struct Policy {
  const char* flow;            // the timeline's kind: "manifest", "launcher", "cargo"
  RemoteErrors remote_errors;  // what a bad remote storage URL does (open_cache)
  // The job cache's build state (up-to-date checks): not for launcher
  // compiles sharing one directory (cargo's own passes are never in it).
  bool keep_build_state;
  bool cache_in_dry_run;  // --dry-run opens the cache too (a manifest's: its probe memo)
  // Whether compiles go to the engine under remote_execution, and how its
  // faults are said (RemoteFor).
  enum class Remote { None, Build, LauncherCompile } remote;
  bool summary;  // the summary line (a launcher compile prints the compiler's output only)
  // --report not written fails a build that succeeded (else a warning: a
  // launcher compile never fails for it); the trace appended to (a make
  // run's compiles share one file) or replaced.
  bool report_is_result;
  bool append_trace;
};

// What the run asks of a flow: who is told of each job, what checks its
// outputs, and the job cache's options.
struct RunOptions {
  report::Progress* observer = nullptr;  // nullptr: the session's recorder
  std::function<Result<void>(const plan::Job&, const std::vector<fs::path>&)> check_outputs;
  cache::JobCacheOptions cache;
  // After the job cache saved its state (when the cache is open): what the
  // build recorded, for the no-op record (run/noop_build.hpp).
  std::function<void(const cache::JobCache&)> after_cache;
};

struct Ran {
  Result<exec::ExecSummary> summary;
  std::map<plan::JobId, cache::JobCache::MissNote> misses;  // for --report
  // With cache.collect_reads: JobCache::reads() (a launcher compile's whole entry).
  std::optional<std::vector<cache::Dep>> reads = std::nullopt;
};

// What a flow found before the cache opens: the project's settings, or that
// it is done already (a no-op build: the summary of its record).
struct Prepared {
  ProjectSettings project;
  std::optional<exec::ExecSummary> done;
};

// How the plan's compiles name their kernels (Session::run applies it).
struct KernelNames {
  enum class Mode { None, LookupsOnly, Stable } mode = Mode::None;
  // Stable: the stable-names library's answer for the compiler, the
  // project's namespace, and where a fault is said.
  std::function<std::optional<toolchain::StableNames>()> answer;
  std::string salt;
  std::function<void(const std::string&)> warn;
};

class Session;

class Flow {
 public:
  virtual ~Flow() = default;
  virtual const Policy& policy() const = 0;
  // Before the cache opens: the project's settings (reading its manifest), or done.
  virtual Result<Prepared> prepare(Session& session) { return Prepared{}; }
  // The plan to run (the flow keeps it; the cache is open unless --dry-run
  // and the policy opens none then), and how its kernels are named.
  virtual Result<plan::Plan*> plan(Session& session, KernelNames& names) = 0;
  // --dry-run's script (by default exec::dry_run_script's).
  virtual std::string script(const plan::Plan& plan) const;
  // The plan's runner; `remote` the engine's (Policy::remote), else nullptr.
  virtual Result<std::unique_ptr<exec::CommandRunner>> runner(std::unique_ptr<exec::RemoteRunner> remote) = 0;
  virtual void options(Session& session, RunOptions& run) {}
  // A flow without a plan (plan() gave none): what it runs instead (a command
  // run unchanged, with the cache open), and its result; by default nothing.
  virtual Result<void> run_alone(Session& session) { return {}; }
  // Such a flow's --trace and --timings picture, when it made one.
  virtual std::optional<report::Timeline> timeline() const { return std::nullopt; }
  // After the run, however it ended: what the flow records (the no-op
  // record, the whole entry, the programs), and its result.
  virtual Result<void> after_run(Session& session, Ran& ran) {
    return ran.summary ? Result<void>{} : Result<void>(ran.summary.error());
  }
  // Whether the run is reported (--report, pictures): a launcher compile
  // that runs unchanged after all is reported as such, later.
  virtual bool reported() const { return true; }
  // Versions of tools the report names that the flow knows (rustc's).
  virtual std::map<fs::path, std::string> known_tools() const { return {}; }
  // The --timings page when no FILE was given, and what the flow draws on it.
  virtual fs::path timings_page(const plan::Plan& plan) const;
  virtual void draw(report::Timeline& timeline) const {}
  // The flow's own part of --report (a launcher call's command and exit code).
  virtual void report(nlohmann::json& report) const {}
};

class Session {
 public:
  // Take make's jobserver first, before any descriptor of ours is open (its
  // closed descriptors must not be mistaken for ours). The clock starts here.
  explicit Session(const Request& options);
  ~Session();  // waits for open_engine_early's thread
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Run `flow`: its result (a failed job, a bad manifest), reported and drawn.
  Result<void> run(Flow& flow);

  const Request& options() const { return options_; }
  const config::Config& config() const { return options_.config; }
  process::JobserverSetup& jobserver() { return jobserver_; }
  // What the report and the timeline are titled, and the report's manifest.
  std::string project;
  fs::path manifest;
  std::chrono::system_clock::time_point started() const { return started_; }
  double elapsed() const { return recorder_.elapsed(); }
  report::Progress& recorder() { return recorder_; }

  // Open the local cache (unless no_cache), trusting it as the settings say
  // (storage::Trust::from_config), and the remotes layered over it, as
  // `policy` says; once: a second call keeps what the first opened. run()
  // opens it; a launcher compile first, to be served whole.
  Result<void> open_cache(const Policy& policy, const ProjectSettings& project = {});
  // nullptr under --no-cache (and before open_cache).
  storage::Storage* storage() { return storage_ ? &*storage_ : nullptr; }
  storage::LayeredStorage* layers() { return layers_ ? &*layers_ : nullptr; }
  const fs::path& cache_dir() const { return cache_dir_; }
  // Where compilers' answers are remembered: next to a private, trusted cache
  // only (a listing planted there would run); nullopt otherwise.
  std::optional<fs::path> probe_memo() const;
  // The same before a session exists (a launcher decides first whether to split).
  static std::optional<fs::path> probe_memo_of(const config::Config& config);
  // The engine_cache setting: whom remote execution's action cache is trusted as.
  exec::EngineCache engine_cache() const;
  // With remote_execution set: open the engine on a thread of its own while
  // the build plans (neither the cache's engine layer nor the runner waits
  // for it). Not in launcher mode (a compile that hits never loads the module).
  void open_engine_early();
  // A manifest build: with the engine layer, the entries the build uses are
  // kept in the engine as its working set (exec/remote/working_set.hpp);
  // `identity` says what the project, its targets and its sources are
  // (asked only when the layer is added). Before open_cache.
  void use_working_set(std::function<std::string()> identity) { working_set_identity_ = std::move(identity); }
  // Where each job ran under remote execution (after run()).
  const report::RemoteNotes& remote_notes() const { return remote_notes_; }

 private:
  // session_cache.cpp: the cache, the engine and the runs.
  void add_engine_layer(std::vector<storage::RemoteConfig>& remotes, storage::LayeredOptions& layered, bool launcher);
  bool engine_layer_on() const;
  Result<std::shared_ptr<exec::EngineLink>> engine_link(bool launcher);
  std::function<void(const std::string&)> engine_warn(const std::string& display) const;
  std::function<bool(bool)> engine_down_memo(const std::string& display) const;
  // With remote_execution set: the runner that sends `plan`'s compiles to
  // the engine; nullptr when unset or unreachable (said once: the build runs
  // locally); an error for a bad URL or a missing client module.
  Result<std::unique_ptr<exec::RemoteRunner>> remote_runner(const plan::Plan& plan, Policy::Remote use);
  void limit_parallelism(exec::ExecOptions& options);
  // `plan` on `runner`: -j and the jobserver, the job cache (when open)
  // serving and storing each job, its counters recorded at the end.
  Ran run_plan(const plan::Plan& plan, exec::CommandRunner& runner, RunOptions run);
  void keep_working_set();

  // session.cpp: what every flow's run ends with.
  Result<void> run_planned(Flow& flow, plan::Plan& plan, KernelNames& names);
  Result<void> finish(Flow& flow, const plan::Plan* plan, const Result<void>& result);
  report::ReportData report_data(const plan::Plan* plan, report::BuildResult result, const std::string& error) const;

  Request options_;
  process::JobserverSetup jobserver_;
  std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();
  report::BuildRecorder recorder_;  // the run's clock
  std::optional<double> seconds_;   // the run's time, taken when its jobs ended
  std::map<plan::JobId, cache::JobCache::MissNote> misses_;
  report::RemoteNotes remote_notes_;
  nlohmann::json tools_ = nlohmann::json::object();

  fs::path cache_dir_;
  std::optional<storage::Storage> storage_;
  std::optional<storage::LayeredStorage> layers_;
  bool opened_ = false;
  std::shared_ptr<exec::EngineLink> engine_;
  std::thread opener_;             // open_engine_early's
  std::optional<fs::path> notes_;  // launcher mode: where once-per-build notes are kept
  std::function<std::string()> working_set_identity_;
  std::shared_ptr<exec::WorkingSet> working_set_;  // with the engine layer and an identity
};

// Ok, Interrupted or Failed, from how a run ended.
template <typename T>
report::BuildResult outcome(const Result<T>& result) {
  return result ? report::BuildResult::Ok
         : result.error().code == exit_code::interrupted ? report::BuildResult::Interrupted
                                                         : report::BuildResult::Failed;
}

}  // namespace ob::run
