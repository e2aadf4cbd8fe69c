#include "offload_build/report/timeline.hpp"

#include <algorithm>
#include <optional>

namespace ob::report {

namespace {

double end_of(const TimelineJob& j) { return j.start_s + j.duration_s; }

}  // namespace

bool served(const TimelineJob& job) { return job.status == "cached" || job.status == "up-to-date"; }

Timeline timeline_of(const plan::Plan& plan, const BuildRecorder& recorder, std::string title, std::string flow,
                     std::chrono::system_clock::time_point started, BuildResult result) {
  Timeline t;
  t.title = std::move(title);
  t.flow = std::move(flow);
  t.started = started;
  t.origin = recorder.origin();
  t.duration_s = recorder.elapsed();
  t.result = build_result_name(result);
  for (const auto& job : plan.jobs) {
    const JobEvents& ev = recorder.job(job.id);
    TimelineJob j;
    j.name = job.describe(plan.cwd);
    j.kind = plan::job_kind_name(job.kind);
    j.target = job.target ? job.target->short_name() : "";
    j.status = job_status_name(ev.status);
    j.reached = ev.start_s.has_value();
    j.start_s = ev.start_s.value_or(0);
    // A job still running when the build stopped ran until then.
    j.duration_s = ev.duration_s.value_or(j.reached ? std::max(0.0, t.duration_s - j.start_s) : 0);
    j.cpu_s = ev.cpu_s.value_or(0);
    for (plan::JobId dep : job.deps)
      if (dep < plan.jobs.size()) j.deps.push_back(dep);
    t.jobs.push_back(std::move(j));
  }
  return t;
}

std::vector<int> assign_lanes(const Timeline& t) {
  std::vector<size_t> order;
  for (size_t i = 0; i < t.jobs.size(); ++i)
    if (t.jobs[i].reached) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return t.jobs[a].start_s < t.jobs[b].start_s; });
  std::vector<int> lane(t.jobs.size(), -1);
  std::vector<double> busy_until;  // per lane
  constexpr double kSlack = 1e-6;  // a job that starts as another ends shares its lane
  for (size_t i : order) {
    const auto& j = t.jobs[i];
    size_t l = 0;
    while (l < busy_until.size() && busy_until[l] > j.start_s + kSlack) ++l;
    if (l == busy_until.size()) busy_until.push_back(0);
    busy_until[l] = end_of(j);
    lane[i] = static_cast<int>(l);
  }
  return lane;
}

std::vector<bool> critical_path(const Timeline& t) {
  std::vector<bool> on(t.jobs.size(), false);
  std::optional<size_t> at;
  for (size_t i = 0; i < t.jobs.size(); ++i)
    if (t.jobs[i].reached && (!at || end_of(t.jobs[i]) > end_of(t.jobs[*at]))) at = i;
  // Each step goes to a job not yet marked: at most one step per job.
  while (at && !on[*at]) {
    on[*at] = true;
    std::optional<size_t> next;
    for (size_t d : t.jobs[*at].deps)
      if (d < t.jobs.size() && t.jobs[d].reached && (!next || end_of(t.jobs[d]) > end_of(t.jobs[*next])))
        next = d;
    at = next;
  }
  return on;
}

StepTimeline::StepTimeline(std::string title, std::string flow) {
  t_.title = std::move(title);
  t_.flow = std::move(flow);
  t_.started = std::chrono::system_clock::now();
  t_.origin = std::chrono::steady_clock::now();
}

double StepTimeline::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_.origin).count();
}

size_t StepTimeline::begin(std::string kind, std::string target, std::string name) {
  TimelineJob j;
  j.kind = std::move(kind);
  j.target = std::move(target);
  j.name = std::move(name);
  j.status = "interrupted";
  j.reached = true;
  j.start_s = now();
  j.duration_s = -1;  // not ended yet
  if (!t_.jobs.empty()) j.deps.push_back(t_.jobs.size() - 1);
  t_.jobs.push_back(std::move(j));
  return t_.jobs.size() - 1;
}

void StepTimeline::end(size_t step, std::string status) {
  if (step >= t_.jobs.size()) return;
  auto& j = t_.jobs[step];
  j.status = std::move(status);
  j.duration_s = std::max(0.0, now() - j.start_s);
}

Timeline StepTimeline::finish(BuildResult result) const {
  Timeline t = t_;
  t.duration_s = now();
  t.result = build_result_name(result);
  for (auto& j : t.jobs)
    if (j.duration_s < 0) j.duration_s = std::max(0.0, t.duration_s - j.start_s);
  return t;
}

TimedStep::TimedStep(StepTimeline* timeline, std::string kind, std::string target, std::string name)
    : timeline_(timeline) {
  if (timeline_) step_ = timeline_->begin(std::move(kind), std::move(target), std::move(name));
}

TimedStep::~TimedStep() { done("failed"); }

void TimedStep::done(std::string status) {
  if (timeline_) timeline_->end(step_, std::move(status));
  timeline_ = nullptr;
}

}  // namespace ob::report
