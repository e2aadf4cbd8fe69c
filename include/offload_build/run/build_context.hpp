// The build context (ccache's Context): what one build needs, made once at
// its start and handed to each step: the settings in force (the resolved
// Config the stages below read), make's jobserver, the local cache and
// remote storage layered over it (open_cache, once), where compilers'
// answers are remembered, the remote-execution runner; and the one
// `run_plan` that runs a plan with the job cache as its serve/after_run hooks. The manifest build, the launcher
// (a compile, a link, a one-step build) and the cargo flow (its device
// passes, package, embed and host pass as one plan, on its own runner:
// exec/cargo_runner.hpp) all run their plans through it; a launcher
// compile opens the cache first and plans nothing when its whole entry hits.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/run/request.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/exec/remote_runner.hpp"
#include "offload_build/exec/working_set.hpp"
#include "offload_build/process/jobserver.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/storage/storage.hpp"

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
};

class BuildContext {
 public:
  // Take make's jobserver first, before any descriptor of ours is open (its
  // closed descriptors must not be mistaken for ours).
  explicit BuildContext(const Request& options);
  ~BuildContext();  // waits for open_engine_early's thread
  BuildContext(const BuildContext&) = delete;
  BuildContext& operator=(const BuildContext&) = delete;

  // Open the local cache (unless no_cache), trusting it as the settings say
  // (storage::Trust::from_config), and the remotes layered over it;
  // once: a second call keeps what the first opened.
  Result<void> open_cache(const ProjectSettings& project, RemoteErrors remote_errors);

  const Request& options() const { return options_; }
  // The settings in force for this build (the stages below get their values
  // from it, or it as a const Config&).
  const config::Config& config() const { return options_.config; }
  process::JobserverSetup& jobserver() { return jobserver_; }
  // nullptr under --no-cache (and before open_cache).
  storage::Storage* storage() { return storage_ ? &*storage_ : nullptr; }
  storage::LayeredStorage* layers() { return layers_ ? &*layers_ : nullptr; }
  const fs::path& cache_dir() const { return cache_dir_; }
  // Where compilers' answers are remembered: next to a private, trusted cache
  // only (a listing planted there would run); nullopt otherwise.
  std::optional<fs::path> probe_memo() const;
  // The same before a context exists (a launcher decides first whether to split).
  static std::optional<fs::path> probe_memo_of(const config::Config& config);

  // The engine_cache setting: whom remote execution's action cache is trusted as.
  exec::EngineCache engine_cache() const;

  // With remote_execution set: open the engine (the client module, the
  // connection, its capabilities) on a thread of its own while the build
  // plans, so that neither the cache's engine layer nor the runner waits for
  // it. Not in launcher mode (a compile that hits never loads the module).
  void open_engine_early();

  // A manifest build: with the engine layer, the entries the build uses are
  // kept in the engine as its working set, and a build that misses its local
  // cache is served from the one stored under the same name
  // (exec/working_set.hpp): `identity` says what the project, its targets and
  // its sources are (asked only when the layer is added: it reads every
  // source). Before open_cache (and open_engine_early, which fetches the set).
  void use_working_set(std::function<std::string()> identity) { working_set_identity_ = std::move(identity); }

  // -j and the jobserver's slots into `options`.
  void limit_parallelism(exec::ExecOptions& options);

  // With remote_execution set: the runner that sends `plan`'s compiles to the
  // engine (exec/remote_runner.hpp); nullptr when it is unset, or when the
  // engine cannot be reached (said once: the build runs locally). An error
  // for a bad URL or a missing client module.
  // A launcher compile (RemoteFor::LauncherCompile) opens the engine on its
  // first job that goes, and says a failure once per make/ninja run.
  // `allow_time_macros`: the manifest's cache_time_macros (a compile reading
  // __DATE__/__TIME__ is otherwise never served by the engine's cache either).
  enum class RemoteFor { Build, LauncherCompile };
  Result<std::unique_ptr<exec::RemoteRunner>> remote_runner(const plan::Plan& plan, RemoteFor use = RemoteFor::Build,
                                                            bool allow_time_macros = false);

  struct RunOptions {
    report::Progress* observer = nullptr;
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
    std::optional<std::vector<cache::Dep>> reads;
  };
  // Run `plan` on `runner`: -j and the jobserver, the job cache (when open)
  // serving and storing each job, its counters recorded at the end.
  Ran run_plan(const plan::Plan& plan, exec::CommandRunner& runner, RunOptions run);

 private:
  void add_engine_layer(std::vector<storage::RemoteConfig>& remotes, storage::LayeredOptions& layered, bool launcher);
  // Whether the local cache has the engine as a layer (exec/engine_storage.hpp).
  bool engine_layer_on() const;
  // The engine of this build, made once: for the cache's engine layer or the
  // remote runner, whichever asks first. An error for a bad URL.
  Result<std::shared_ptr<exec::EngineLink>> engine_link(bool launcher);
  // Where remote execution's warnings go (once per make run in launcher
  // mode), and whether the engine failed earlier in the make run.
  std::function<void(const std::string&)> engine_warn(const std::string& display) const;
  std::function<bool(bool)> engine_down_memo(const std::string& display) const;

  Request options_;
  process::JobserverSetup jobserver_;
  fs::path cache_dir_;
  std::optional<storage::Storage> storage_;
  std::optional<storage::LayeredStorage> layers_;
  bool opened_ = false;
  std::shared_ptr<exec::EngineLink> engine_;
  std::thread opener_;  // open_engine_early's
  std::optional<fs::path> notes_;  // launcher mode: where once-per-build notes are kept
  std::function<std::string()> working_set_identity_;
  std::shared_ptr<exec::WorkingSet> working_set_;  // with the engine layer and an identity
  void keep_working_set();  // after a build that succeeded
};

}  // namespace ob::run
