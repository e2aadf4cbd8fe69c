// A build as a timeline: each job with its kind, target, outcome, start and
// duration. The data behind --timings (timings_html.hpp) and --trace
// (trace_json.hpp), made from a plan and its BuildRecorder (manifest and
// launcher builds, the cargo flow) or step by step (StepTimeline: a
// launcher command run unchanged).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "offload_build/plan/plan.hpp"
#include "offload_build/report/build_report.hpp"

namespace ob::report {

struct TimelineJob {
  std::string name;    // "device sm_90 src/k.c"
  std::string kind;    // job_kind_name: host-ir, device, assemble, image-link, package, stub, host, link
  std::string target;  // short name ("sm_90"); "" for jobs of no target
  std::string status;  // job_status_name: ran, cached, up-to-date, failed, not-run, interrupted
  bool reached = false;  // started or served: it has a start and a duration
  double start_s = 0;    // seconds after Timeline::origin
  double duration_s = 0;
  double cpu_s = 0;      // CPU seconds (user + system) of a job that ran; 0 when served
  // Under remote execution, where it ran: "remote (queued 0.01 s, ran 0.52 s)"
  // (or "remote (the engine gave no times)"),
  // "engine cache", "local after all: WHY", "local"; "" without.
  std::string where;
  std::vector<size_t> deps;  // indices into Timeline::jobs
};

struct Timeline {
  std::string title;  // the project (a launcher compile: its object's name)
  std::string flow;   // "manifest", "launcher", "cargo"
  std::chrono::system_clock::time_point started;
  std::string started_text;  // when set, the start as read back (a trace file), shown instead
  std::chrono::steady_clock::time_point origin;  // the clock start_s counts from
  double duration_s = 0;
  std::string result = "ok";  // build_result_name
  std::vector<TimelineJob> jobs;
};

// Whether a job ran no command: its outputs came from the cache or were current.
bool served(const TimelineJob& job);

// The plan's jobs as the recorder saw them (its clock is the origin).
Timeline timeline_of(const plan::Plan& plan, const BuildRecorder& recorder, std::string title, std::string flow,
                     std::chrono::system_clock::time_point started, BuildResult result);

// For each job, the lane (0, 1, ...) its bar goes in: the lowest lane free at
// its start, in order of start, so no two bars of a lane overlap and there are
// as many lanes as jobs ever ran at once. -1 for jobs not reached.
std::vector<int> assign_lanes(const Timeline& timeline);

// The critical path: from the job that ended last, back through the
// dependency that ended last at each step, to a job with none. A mark per job.
std::vector<bool> critical_path(const Timeline& timeline);

// A flow without a plan (a command run unchanged): steps one after another, each a job that
// depends on the step before it.
class StepTimeline {
 public:
  StepTimeline(std::string title, std::string flow);
  // A step starts now; returns its index for end().
  size_t begin(std::string kind, std::string target, std::string name);
  // ...and ends now, with status "ran", "cached", "up-to-date" or "failed".
  void end(size_t step, std::string status);
  // The timeline so far (a step begun and not ended: "interrupted").
  Timeline finish(BuildResult result) const;

 private:
  double now() const;
  Timeline t_;
};

// One step of a StepTimeline (none when `timeline` is null): begun when made,
// ended by done(status), or "failed" when it goes out of scope first.
class TimedStep {
 public:
  TimedStep(StepTimeline* timeline, std::string kind, std::string target, std::string name);
  ~TimedStep();
  TimedStep(const TimedStep&) = delete;
  TimedStep& operator=(const TimedStep&) = delete;
  void done(std::string status);

 private:
  StepTimeline* timeline_;
  size_t step_ = 0;
};

}  // namespace ob::report
