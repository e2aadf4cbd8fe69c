// The executor's cache hooks: serve a job's outputs from the cache, or store
// them after it ran; count hits and misses; explain every decision.
// serve() may run on several of the executor's lookup threads at once: the
// cache's own state is behind one lock, released while storage is asked, and
// what a lookup has to say waits for after_serve() on the executor's thread.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <ostream>
#include <string>
#include <vector>

#include "offload_build/cache/build_state.hpp"
#include "offload_build/cache/file_facts.hpp"
#include "offload_build/cache/job_key.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/plan/plan.hpp"

namespace ob::cache {

struct JobCacheOptions {
  bool allow_time_macros = false;    // serve sources using __DATE__/__TIME__ anyway
  std::ostream* explain = nullptr;   // --explain: one line per job
  // false (launcher mode, where many compiles share one directory): keep no
  // build state, so nothing is "up to date" and --explain has no history.
  bool keep_build_state = true;
  // Given the diagnostics a job printed when it ran (warnings), stored with
  // its outputs, when a hit restores them: print them again, as ccache does.
  std::function<void(const plan::Job&, std::string_view)> replay;
  // Remember every file each job read and the tools it ran (reads()).
  bool collect_reads = false;
  // --explain for a planner that keeps its own record of what a job read
  // (the cargo flow, which keeps no build state): what changed since the job
  // last ran, asked when the build state knows nothing of the job, for a miss
  // and for a job that is never cached; nullopt: nothing to say. Called from
  // the lookup threads.
  std::function<std::optional<std::string>(const plan::Job&)> planner_explain;
  // Files under these are keyed by path, size and mtime (file_facts.hpp;
  // the system_dirs setting: run::Session fills it).
  std::vector<fs::path> system_dirs;
  // Whether a job's outputs, when stored, go to the local cache only (a
  // result served by remote execution's action cache, which any client of
  // the engine may have written: never signed into remote storage unless the
  // engine is trusted, the engine_cache setting). Asked after the job ran.
  std::function<bool(const plan::Job&)> local_only;
};

// Also the build's exec::JobKeys (PlanKeys): the key serve() computed for a
// job is the one its runner asks for (remote execution), from the same file
// facts; computed here, once, for a job it never keyed.
class JobCache final : public PlanKeys {
 public:
  JobCache(storage::LayeredStorage& storage, const plan::Plan& plan, JobCacheOptions options);

  // Fill the executor's serve, after_serve and after_run hooks and its keys with this cache.
  void attach(exec::ExecOptions& options);

  // Before a job runs: UpToDate when its outputs are current (recorded state
  // unchanged, nothing read or written); FromCache after writing them to
  // `temps` on a hit; No when it must run. Safe from several threads at once.
  exec::Served serve(const plan::Job& job, const std::vector<fs::path>& temps);
  // On the executor's thread after serve(job): the --explain line and the
  // diagnostics a hit replays, in the order the jobs are reported.
  void after_serve(const plan::Job& job);
  // After it ran successfully: store outputs (still at `temps`) and its deps.
  // `diagnostics`: what the command printed, replayed on later hits.
  void store(const plan::Job& job, const std::vector<fs::path>& temps,
             const std::optional<fs::path>& depfile, std::string_view diagnostics = {});

  // A job that stands for `jobs` jobs whose files read are `deps` (reads() of
  // their build: a launcher compile's whole entry): store it like store()
  // would had it run and read those, `kept_depfile` the caller's depfile.
  void store_whole(const plan::Job& job, const std::vector<fs::path>& outputs, std::vector<Dep> deps,
                   std::optional<std::string> kept_depfile, std::string_view diagnostics, size_t jobs);
  // With collect_reads: every file the plan's jobs read outside its build
  // directory and every tool they ran, once each; nullopt unless every job
  // was served or stored (so all of them are known).
  std::optional<std::vector<Dep>> reads() const;

  // This build's counters; add them to the shared ones and save the build
  // state for the next --explain.
  const storage::Counters& counters() const { return counters_; }
  // Whether any job was served by a confined remote (storage::Lookup::
  // confined: the engine's layer) or stored locally only: what stands for
  // the build (a launcher compile's whole entry) must not go further.
  bool confined() const {
    std::lock_guard lock(mu_);
    return !confined_.empty();
  }
  const BuildState& state() const { return state_; }
  void finish();

  // Why serve() missed, per job it missed (--report): the reason counted in
  // the stats ("no entry", "inputs changed", ...) and what --explain says.
  struct MissNote {
    std::string reason;
    std::string detail;
  };
  const std::map<plan::JobId, MissNote>& misses() const { return misses_; }

 private:
  struct Pending {
    JobKey key;
    bool storable = true;
  };

  using Lock = std::unique_lock<std::mutex>;
  const JobKey& key_of(const plan::Job& job) override;  // with mu_ held
  void miss(const plan::Job& job, const std::string& reason, std::string detail);
  void explain(const plan::Job& job, const std::string& line);  // said in after_serve
  // Storage is asked with `lock` released. `changed`: on a miss, what differs
  // from the newest entry (dep_change).
  std::optional<std::string> find_result_key(const plan::Job& job, const JobKey& key, std::string& reason,
                                             std::string& changed, std::vector<Dep>& deps, Lock& lock,
                                             bool& confined);
  // Whether what `job` stores goes to the local cache only: it was told so
  // (local_only), or a job whose outputs it reads was served by a confined
  // remote or stored locally only (so is then `job`).
  bool stays_local(const plan::Job& job);
  enum class Restored { Ok, Corrupt, Unwritable };
  Restored restore(const plan::Job& job, const storage::Entry& entry, const std::vector<fs::path>& temps,
                   std::string& diagnostics, size_t& jobs);
  void put_result(const plan::Job& job, const Pending& pending, const std::vector<fs::path>& temps,
                  const std::vector<Dep>& deps, std::optional<std::string> kept_depfile,
                  std::string_view diagnostics, size_t jobs);
  void remember(const std::string& id, const JobKey& key, const std::vector<Dep>& deps,
                const std::vector<fs::path>& temps, const plan::Job& job);
  std::vector<Dep> deps_from_depfile(const plan::Job& job, std::string_view depfile, bool& time_macros);
  void update_manifest(const JobKey& key, const std::vector<Dep>& deps, const std::string& result, bool local);
  // --explain of a miss: the same job stored from another directory, whose
  // paths alone kept it from a hit (cache/place.hpp).
  std::optional<std::string> explain_elsewhere(const plan::Job& job, const JobKey& key);

  // What serve() found to say about a job, until after_serve() says it.
  struct Said {
    std::string explain;
    std::string diagnostics;
  };

  // mu_ (PlanKeys') guards everything below (storage_ is safe on its own).
  storage::LayeredStorage& storage_;
  JobCacheOptions options_;
  storage::Counters counters_;
  BuildState state_;
  std::map<plan::JobId, Pending> pending_;
  std::map<plan::JobId, JobKey> unlooked_;  // key_of's, for jobs serve() did not key
  std::map<plan::JobId, MissNote> misses_;
  // Per translation unit (Job::unit), the first job of this build that
  // missed only for its paths (explain_elsewhere).
  std::map<size_t, std::pair<std::string, std::string>> place_misses_;  // unit -> job id, what alone differs
  std::map<plan::JobId, Said> said_;
  std::map<plan::JobId, std::vector<Dep>> reads_;  // collect_reads
  std::set<plan::JobId> confined_;                  // served confined, or stored locally only
};

}  // namespace ob::cache
