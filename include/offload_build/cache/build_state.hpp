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
  std::vector<Dep> deps;         // inputs, depfile entries, lookups that found nothing (lookups.hpp)
  std::vector<Stamp> dep_stamps; // each dep's stat when it was hashed (same order; none for an absent path)
  std::vector<std::pair<std::string, Stamp>> outputs;  // absolute path, stat after writing
};

class BuildState {
 public:
  explicit BuildState(fs::path file);  // loads it if present and valid
  void record(const std::string& job_id, JobRecord record);
  // Saved only when something was recorded; atomic; failures are ignored (the
  // state only feeds --explain and the up-to-date check).
  void save() const;
  // After the jobs' outputs were renamed into place (which sets their
  // ctime): each recorded output whose stat still matches in all else takes
  // its ctime now, as a later build's stat will see it.
  void settle_outputs();

  // The job's outputs are current without reading a file: same tools, argv
  // and environment as last time, every file it read has the stat it had
  // when hashed, and every output is still the file it wrote. Keeps the record.
  bool up_to_date(const std::string& job_id, const JobKey& described, FileFactsCache& files,
                  const fs::path& cwd);

  // For the no-op record (noop_record.hpp): the stamps this build recorded
  // for every job of `plan`, by absolute path (each file it read, each output),
  // which up_to_date() would compare next time. false when a job has no
  // record this build, or one up_to_date() refuses (it would run again), or
  // two records disagree about a file.
  bool current_stamps(const plan::Plan& plan, std::map<std::string, Stamp>& files) const;

  // Whether the last build recorded `job_id`.
  bool knows(const std::string& job_id) const { return previous_.count(job_id) > 0; }

  // Why `key` (+ current files) differs from the last record of `job_id`.
  std::string explain_miss(const std::string& job_id, const plan::Job& job, const JobKey& key,
                           FileFactsCache& files, const fs::path& cwd) const;

 private:
  fs::path file_;
  std::map<std::string, JobRecord> previous_;
  std::map<std::string, JobRecord> current_;
  bool dirty_ = false;
};

// A stable name for a job across builds: "device sm_90 src/k.c".
std::string job_id(const plan::Job& job, const fs::path& cwd);

}  // namespace ob::cache
