// --report FILE: a JSON account of one build (schema: config/report.schema.json,
// documented in docs/REPORT.md). BuildRecorder listens to the executor's
// events; make_report joins them with the plan and the cache's decisions.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "offload_build/plan/plan.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/util/result.hpp"

namespace ob::report {

inline constexpr int kReportVersion = 1;

// What happened to one job, as the executor reported it.
struct JobEvents {
  enum class Status { NotRun, Running, Ran, Cached, UpToDate, Failed };
  Status status = Status::NotRun;
  std::optional<double> start_s;     // seconds after the build started
  std::optional<double> duration_s;
  std::optional<int> exit_code;      // commands only
  std::optional<double> cpu_s;       // commands only: user + system CPU seconds
  std::string error;                 // failed jobs
};

std::string_view job_status_name(JobEvents::Status status);

class BuildRecorder final : public Progress {
 public:
  BuildRecorder();  // the build's clock starts here

  void build_started(const plan::Plan& plan) override;
  void job_started(const plan::Job& job) override;
  void job_served(const plan::Job& job, ServedFrom from, double seconds) override;
  void job_finished(const plan::Job& job, double seconds) override;
  void job_found_current(const plan::Job& job) override;
  void job_cpu(const plan::Job& job, double cpu_seconds) override;
  void job_failed(const plan::Job& job, int exit_code, double seconds, const std::string& error) override;

  const JobEvents& job(plan::JobId id) const;
  double elapsed() const;
  std::chrono::steady_clock::time_point origin() const { return start_; }  // the clock's zero

 private:
  JobEvents& at(plan::JobId id);
  std::chrono::steady_clock::time_point start_;
  std::vector<JobEvents> jobs_;
};

// The cache's word on a job that was not served: a reason code ("no entry",
// "inputs changed", "time macros", ...) and what --explain says.
struct MissReason {
  std::string reason;
  std::string detail;
};

struct ReportData {
  std::string project;                    // the manifest's name ("" before it was read)
  fs::path manifest;                      // absolute
  std::chrono::system_clock::time_point started;
  double duration_s = 0;
  BuildResult result = BuildResult::Ok;
  std::string error;                      // a failed build's message
  const plan::Plan* plan = nullptr;             // null when the build failed before planning
  const BuildRecorder* recorder = nullptr;
  bool cache_enabled = false;
  std::optional<fs::path> cache_dir;
  // Why a job that ran was not served; nullopt when the cache gave no reason.
  std::function<std::optional<MissReason>(const plan::Job&)> miss_reason;
  // Where a job ran under remote execution ({"where", "queued_s",
  // "executed_s", "why"}); nullopt: not asked (no remote execution).
  std::function<std::optional<nlohmann::json>(const plan::Job&)> execution;
  nlohmann::json tools = nlohmann::json::object();
};

nlohmann::json make_report(const ReportData& data);

// The programs the plan's jobs use: for each one that a job starts (argv[0])
// the first line of its `--version` (programs whose version is in `known`,
// by path, are not run); for the others a job relies on (ptxas, nvlink, ld)
// only path, size and modification time. Plus offload-build itself. Without
// `ask_versions`, no program is run at all.
nlohmann::json describe_tools(const plan::Plan& plan, const std::map<fs::path, std::string>& known = {},
                              bool ask_versions = true);

// Write `report` to `file` (a temporary name in the same directory, then a
// rename, so a reader never sees half a report). Creates the directory.
Result<void> write_report(const fs::path& file, const nlohmann::json& report);

// "2026-05-20T12:34:56.789Z"
std::string iso8601_utc(std::chrono::system_clock::time_point t);

}  // namespace ob::report
