// The executor's cache hooks: serve a job's outputs from the cache, or store
// them after it ran; count hits and misses; explain every decision.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "offload_build/cache/build_state.hpp"
#include "offload_build/cache/file_facts.hpp"
#include "offload_build/cache/job_key.hpp"
#include "offload_build/cache/storage.hpp"
#include "offload_build/plan/plan.hpp"

namespace ob::cache {

struct JobCacheOptions {
  bool allow_time_macros = false;    // serve sources using __DATE__/__TIME__ anyway
  std::ostream* explain = nullptr;   // --explain: one line per job
};

class JobCache {
 public:
  JobCache(Storage& storage, const Plan& plan, JobCacheOptions options);

  // Before a job runs: on a hit, write its outputs to `temps` and return true.
  bool serve(const Job& job, const std::vector<fs::path>& temps);
  // After it ran successfully: store outputs (still at `temps`) and its deps.
  void store(const Job& job, const std::vector<fs::path>& temps,
             const std::optional<fs::path>& depfile);

  // This build's counters; add them to the shared ones and save the build
  // state for the next --explain.
  const Counters& counters() const { return counters_; }
  void finish();

 private:
  struct Pending {
    JobKey key;
    bool storable = true;
  };

  void miss(const Job& job, const std::string& reason, const std::string& detail);
  std::optional<std::string> find_result_key(const Job& job, const JobKey& key,
                                             std::string& reason);
  std::vector<Dep> deps_from_depfile(const Job& job, const fs::path& depfile, bool& time_macros);
  void update_manifest(const JobKey& key, const std::vector<Dep>& deps, const std::string& result);

  Storage& storage_;
  const Plan& plan_;
  JobCacheOptions options_;
  FileFactsCache files_;
  Counters counters_;
  BuildState state_;
  std::map<JobId, Pending> pending_;
};

}  // namespace ob::cache
