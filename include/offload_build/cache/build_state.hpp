// What each job looked like the last time it ran or was served, kept in the
// build directory, so --explain can say which input changed (ninja -d explain).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "offload_build/cache/file_facts.hpp"
#include "offload_build/cache/job_key.hpp"
#include "offload_build/plan/plan.hpp"

namespace ob::cache {

struct JobRecord {
  std::vector<std::string> tools;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::vector<Dep> deps;  // inputs and depfile entries
};

class BuildState {
 public:
  explicit BuildState(fs::path file);  // loads it if present and valid
  void record(const std::string& job_id, JobRecord record);
  void save() const;  // atomic; failures are ignored (it only feeds --explain)

  // Why `key` (+ current files) differs from the last record of `job_id`.
  std::string explain_miss(const std::string& job_id, const Job& job, const JobKey& key,
                           FileFactsCache& files, const fs::path& cwd) const;

 private:
  fs::path file_;
  std::map<std::string, JobRecord> previous_;
  std::map<std::string, JobRecord> current_;
};

// A stable name for a job across builds: "device sm_90 src/k.c".
std::string job_id(const Job& job, const fs::path& cwd);

}  // namespace ob::cache
