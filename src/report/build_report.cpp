#include "offload_build/report/build_report.hpp"

#include <ctime>
#include <set>
#include <system_error>

#include <fmt/core.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/json_text.hpp"

namespace ob::report {

namespace {

using Status = JobEvents::Status;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Three decimals are plenty and keep the file readable.
double round_ms(double s) { return static_cast<double>(static_cast<long long>(s * 1000.0 + 0.5)) / 1000.0; }

nlohmann::json opt_number(const std::optional<double>& v) {
  return v ? nlohmann::json(round_ms(*v)) : nlohmann::json(nullptr);
}

nlohmann::json paths(const std::vector<fs::path>& ps) {
  auto arr = nlohmann::json::array();
  for (const auto& p : ps) arr.push_back(p.string());
  return arr;
}

nlohmann::json file_identity(const fs::path& p) {
  nlohmann::json j{{"path", p.string()}};
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (!ec) j["size"] = size;
  const auto mtime = fs::last_write_time(p, ec);
  if (!ec) {
    const auto sys = std::chrono::file_clock::to_sys(mtime);
    j["mtime"] = iso8601_utc(std::chrono::time_point_cast<std::chrono::system_clock::duration>(sys));
  }
  return j;
}

// The first non-empty line of `prog --version`, or "".
std::string version_line(const fs::path& prog) {
  auto r = process::capture(process::Command{{prog.string(), "--version"}, {}, {}});
  if (!r || r->exit_code != 0) return "";
  const std::string& text = r->out.empty() ? r->err : r->out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) return line;
    start = end + 1;
  }
  return "";
}

}  // namespace

std::string_view job_status_name(Status status) {
  switch (status) {
    case Status::NotRun: return "not-run";
    case Status::Running: return "interrupted";  // still running when the build stopped
    case Status::Ran: return "ran";
    case Status::Cached: return "cached";
    case Status::UpToDate: return "up-to-date";
    case Status::Failed: return "failed";
  }
  return "not-run";
}

BuildRecorder::BuildRecorder() : start_(std::chrono::steady_clock::now()) {}

double BuildRecorder::elapsed() const { return seconds_since(start_); }

JobEvents& BuildRecorder::at(plan::JobId id) {
  if (id >= jobs_.size()) jobs_.resize(id + 1);
  return jobs_[id];
}

const JobEvents& BuildRecorder::job(plan::JobId id) const {
  static const JobEvents none;
  return id < jobs_.size() ? jobs_[id] : none;
}

void BuildRecorder::build_started(const plan::Plan& plan) { jobs_.assign(plan.jobs.size(), JobEvents{}); }

void BuildRecorder::job_started(const plan::Job& job) {
  auto& j = at(job.id);
  j.status = Status::Running;
  j.start_s = elapsed();
}

void BuildRecorder::job_served(const plan::Job& job, ServedFrom from, double seconds) {
  auto& j = at(job.id);
  j.status = from == ServedFrom::Cache ? Status::Cached : Status::UpToDate;
  j.duration_s = seconds;
  j.start_s = std::max(0.0, elapsed() - seconds);
}

void BuildRecorder::job_cpu(const plan::Job& job, double cpu_seconds) { at(job.id).cpu_s = cpu_seconds; }

void BuildRecorder::job_finished(const plan::Job& job, double seconds) {
  auto& j = at(job.id);
  if (j.status == Status::Running) {
    j.status = Status::Ran;
    j.exit_code = 0;
  }
  j.duration_s = seconds;
}

void BuildRecorder::job_found_current(const plan::Job& job) {
  auto& j = at(job.id);
  j.status = Status::UpToDate;
  j.exit_code = 0;
}

void BuildRecorder::job_failed(const plan::Job& job, int exit_code, double seconds, const std::string& error) {
  auto& j = at(job.id);
  if (j.status == Status::Running || exit_code != 0) j.exit_code = exit_code;
  if (exit_code < 0) j.exit_code.reset();  // the command never started
  j.status = Status::Failed;
  j.duration_s = seconds;
  j.error = error;
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - secs).count();
  const std::time_t tt = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms);
}

namespace {

// A job's cache column: what the cache did ("hit", "miss", ...), and for a job
// that ran, why (with the miss's reason_code).
void add_cache_column(nlohmann::json& j, const plan::Job& job, const JobEvents& ev, const ReportData& d) {
  std::string cache;
  nlohmann::json reason = nullptr;
  switch (ev.status) {
    case Status::Cached: cache = "hit"; break;
    case Status::UpToDate: cache = "up-to-date"; reason = "outputs current (recorded state unchanged)"; break;
    case Status::NotRun: break;
    default:
      if (!d.cache_enabled) {
        cache = "off";
      } else if (!job.cacheable) {
        cache = "uncacheable";
        reason = job.uncacheable_reason.empty() ? "this kind of job is never cached" : job.uncacheable_reason;
      } else {
        cache = "miss";
        auto why = d.miss_reason ? d.miss_reason(job) : std::nullopt;
        reason = why ? (why->detail.empty() ? why->reason : why->detail)
                     : std::string("an input is missing or unreadable");
        if (why) j["reason_code"] = why->reason;
      }
  }
  j["cache"] = cache.empty() ? nlohmann::json(nullptr) : nlohmann::json(cache);
  j["reason"] = reason;
}

nlohmann::json job_json(const plan::Job& job, const JobEvents& ev, const plan::Plan& plan, const ReportData& d) {
  nlohmann::json j;
  j["id"] = job.id;
  j["kind"] = plan::job_kind_name(job.kind);
  j["target"] = job.target ? nlohmann::json(job.target->short_name()) : nlohmann::json(nullptr);
  j["triple"] = job.target ? nlohmann::json(job.target->triple) : nlohmann::json(nullptr);
  j["description"] = job.describe(plan.cwd);
  j["source"] = job.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.source.string());
  j["inputs"] = paths(job.inputs);
  j["outputs"] = paths(job.outputs);
  j["deps"] = job.deps;
  j["command"] = job.argv;
  j["status"] = job_status_name(ev.status);
  j["started_s"] = opt_number(ev.start_s);
  j["duration_s"] = opt_number(ev.duration_s);
  j["exit_code"] = ev.exit_code ? nlohmann::json(*ev.exit_code) : nlohmann::json(nullptr);
  add_cache_column(j, job, ev, d);
  if (!ev.error.empty()) j["error"] = ev.error;
  if (d.execution)
    if (auto e = d.execution(job)) j["execution"] = std::move(*e);
  return j;
}

// The build's products: the outputs of a job no other job reads.
void add_products(nlohmann::json& outputs, const plan::Job& job) {
  for (const auto& out : job.outputs) {
    nlohmann::json o{{"path", out.string()}, {"job", job.id}};
    std::error_code ec;
    const auto size = fs::file_size(out, ec);
    o["exists"] = !ec;
    if (!ec) o["size"] = size;
    outputs.push_back(std::move(o));
  }
}

}  // namespace

nlohmann::json make_report(const ReportData& d) {
  nlohmann::json r;
  r["version"] = kReportVersion;
  r["offload_build"] = OB_VERSION;
  r["project"] = d.project;
  r["manifest"] = d.manifest.string();
  r["cwd"] = d.plan ? nlohmann::json(d.plan->cwd.string()) : nlohmann::json(d.manifest.parent_path().string());
  r["started"] = iso8601_utc(d.started);
  r["duration_s"] = round_ms(d.duration_s);
  r["result"] = build_result_name(d.result);
  r["error"] = d.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.error);
  r["cache_dir"] = d.cache_enabled && d.cache_dir ? nlohmann::json(d.cache_dir->string()) : nlohmann::json(nullptr);
  r["tools"] = d.tools;

  auto outputs = nlohmann::json::array();
  auto jobs = nlohmann::json::array();
  size_t ran = 0, from_cache = 0, up_to_date = 0, failed = 0, not_run = 0, misses = 0;
  std::set<std::string> targets;
  if (d.plan) {
    const plan::Plan& plan = *d.plan;
    std::vector<bool> needed(plan.jobs.size(), false);
    for (const auto& job : plan.jobs)
      for (plan::JobId dep : job.deps)
        if (dep < needed.size()) needed[dep] = true;
    for (const auto& job : plan.jobs) {
      static const JobEvents none;
      const JobEvents& ev = d.recorder ? d.recorder->job(job.id) : none;
      if (job.target) targets.insert(job.target->short_name());
      nlohmann::json j = job_json(job, ev, plan, d);
      misses += j["cache"] == "miss";
      jobs.push_back(std::move(j));
      switch (ev.status) {
        case Status::Ran: ++ran; break;
        case Status::Cached: ++from_cache; break;
        case Status::UpToDate: ++up_to_date; break;
        case Status::Failed: ++failed; break;
        default: ++not_run; break;
      }
      if (!needed[job.id]) add_products(outputs, job);
    }
  }
  r["targets"] = targets;
  r["outputs"] = outputs;
  r["summary"] = {{"jobs", d.plan ? d.plan->jobs.size() : 0},
                  {"ran", ran},
                  {"from_cache", from_cache},
                  {"up_to_date", up_to_date},
                  {"failed", failed},
                  {"not_run", not_run},
                  {"cache_hits", from_cache},
                  {"cache_misses", misses},
                  {"duration_s", round_ms(d.duration_s)},
                  // launcher mode: compiles run unchanged, by reason (none here)
                  {"unchanged_by_reason", nlohmann::json::object()}};
  r["launcher"] = nullptr;  // launcher mode: the compile command and whether it was split
  r["jobs"] = jobs;
  return r;
}

nlohmann::json describe_tools(const plan::Plan& plan, const std::map<fs::path, std::string>& known,
                              bool ask_versions) {
  nlohmann::json tools = nlohmann::json::object();
  std::error_code ec;
  tools["offload-build"] = {{"path", fs::read_symlink("/proc/self/exe", ec).string()},
                            {"version", "offload-build " OB_VERSION}};
  std::set<fs::path> started, used;
  for (const auto& job : plan.jobs) {
    if (!job.argv.empty()) started.insert(job.argv.front());
    for (const auto& t : job.tools) used.insert(t);
  }
  auto add = [&](const fs::path& prog, bool ask_version) {
    std::string name = prog.filename().string();
    if (tools.contains(name)) name = prog.string();  // two programs of the same name
    nlohmann::json j = file_identity(prog);
    if (auto it = known.find(prog); it != known.end()) j["version"] = it->second;
    else if (ask_version) {
      const std::string v = version_line(prog);
      j["version"] = v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
    }
    tools[name] = std::move(j);
  };
  for (const auto& p : started) add(p, ask_versions);
  for (const auto& p : used)
    if (!started.count(p)) add(p, false);
  return tools;
}

Result<void> write_report(const fs::path& file, const nlohmann::json& report) {
  const fs::path target = fs::absolute(file);
  std::error_code ec;
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  // Non-UTF-8 names: U+FFFD.
  auto written = util::write_file_atomic(target, util::dump_replacing(report, 2) + '\n');
  if (!written)
    return Error::failure(fmt::format("cannot write the report {}: {}", target.string(), written.error().message));
  return {};
}

}  // namespace ob::report
