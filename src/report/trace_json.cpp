#include "offload_build/report/trace_json.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include <fmt/core.h>

#include "offload_build/util/files.hpp"
#include "offload_build/util/json_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::report {

namespace {

constexpr std::string_view kHead = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
constexpr std::string_view kTail = "\n]}\n";

long long micros(double seconds) { return std::llround(seconds * 1e6); }

nlohmann::json meta(std::string_view what, long pid, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

// The events as lines, joined by ",\n" (no head, no tail).
std::string event_lines(const nlohmann::json& events) {
  std::string text;
  for (const auto& e : events) {
    if (!text.empty()) text += ",\n";
    text += util::dump_replacing(e);  // names that are not UTF-8: U+FFFD
  }
  return text;
}

// An exclusive flock on a file for this object's lifetime, waited for at most
// `limit` (another writer holds it for one file rewrite only).
class FileLock {
 public:
  FileLock(const fs::path& file, std::chrono::milliseconds limit) {
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      error_ = std::strerror(errno);
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() > deadline) {
        error_ = errno == EWOULDBLOCK ? fmt::format("held by another process for over {} s", limit.count() / 1000)
                                      : std::strerror(errno);
        ::close(fd_);
        fd_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace

nlohmann::json trace_events(const Timeline& t, long pid) {
  auto events = nlohmann::json::array();
  events.push_back(meta("process_name", pid, 0, fmt::format("offload-build {} ({})", t.title, t.flow)));
  events.back()["args"]["started"] = iso8601_utc(t.started);  // for timeline_from_trace
  const auto lanes = assign_lanes(t);
  const auto critical = critical_path(t);
  int lane_count = 0;
  for (int l : lanes) lane_count = std::max(lane_count, l + 1);
  for (int l = 0; l < lane_count; ++l) events.push_back(meta("thread_name", pid, l + 1, fmt::format("slot {}", l + 1)));
  const long long origin =
      std::chrono::duration_cast<std::chrono::microseconds>(t.origin.time_since_epoch()).count();
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& j = t.jobs[i];
    if (!j.reached) continue;
    nlohmann::json args{{"status", j.status}, {"served", served(j)}, {"critical", bool(critical[i])},
                        {"job", i}, {"deps", j.deps}};
    if (!j.target.empty()) args["target"] = j.target;
    if (j.cpu_s > 0) args["cpu_s"] = j.cpu_s;
    if (!j.where.empty()) args["where"] = j.where;
    events.push_back({{"name", j.name}, {"cat", j.kind}, {"ph", "X"},
                      {"ts", origin + micros(j.start_s)}, {"dur", std::max(1LL, micros(j.duration_s))},
                      {"pid", pid}, {"tid", lanes[i] + 1}, {"args", std::move(args)}});
  }
  return events;
}

std::string trace_document(const nlohmann::json& events) {
  return std::string(kHead) + event_lines(events) + std::string(kTail);
}

Result<void> write_trace(const fs::path& file, const Timeline& t) {
  const fs::path target = fs::absolute(file);
  std::error_code ec;
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  auto written = util::write_file_atomic(target, trace_document(trace_events(t, ::getpid())));
  if (!written)
    return Error::failure(fmt::format("cannot write the trace {}: {}", target.string(), written.error().message));
  return {};
}

Result<void> append_trace(const fs::path& file, const Timeline& t) {
  const fs::path target = fs::absolute(file);
  auto fail = [&](const std::string& why) {
    return Error::failure(fmt::format("the trace {}: {}; this compile's events are not in it", target.string(), why));
  };
  std::error_code ec;
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  FileLock lock(fs::path(target.string() + ".lock"), std::chrono::seconds(10));
  if (!lock.error().empty()) return fail("cannot lock " + target.string() + ".lock: " + lock.error());
  int open_errno = 0;
  auto old = util::read_regular_file(target, kMaxTraceFile, "a trace", &open_errno);
  if (!old && open_errno != ENOENT) return fail(old.error().message);
  // Missing or empty (made by the caller, `touch`): a new trace.
  std::string text = old && !old->empty() ? std::move(*old) : std::string(kHead) + std::string(kTail);
  if (!util::starts_with(text, kHead) || !util::ends_with(text, kTail) || text.size() < kHead.size() + kTail.size())
    return fail("not a trace offload-build wrote (remove it, or name another file)");
  const std::string ours = event_lines(trace_events(t, ::getpid()));
  if (text.size() + ours.size() + 2 > kMaxTraceFile)
    return fail(fmt::format("it would grow past {}", util::format_bytes(kMaxTraceFile)));
  text.resize(text.size() - kTail.size());
  if (text.size() > kHead.size() && !ours.empty()) text += ",\n";
  text += ours;
  text += kTail;
  auto written = util::write_file_atomic(target, text);
  if (!written) return fail(written.error().message);
  return {};
}

Result<Timeline> timeline_from_trace(const nlohmann::json& trace, std::string title) {
  auto bad = [](const std::string& why) {
    return Error::usage("not a trace of offload-build's --trace: " + why);
  };
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return bad("no \"traceEvents\" array");
  struct Event {
    long long ts, dur;
    long long pid;
    size_t job;
    TimelineJob j;
  };
  std::vector<Event> events;
  std::string started;  // the earliest process's start
  std::set<long long> pids;
  for (const auto& e : trace["traceEvents"]) {
    if (!e.is_object()) return bad("an event is not an object");
    const auto args = e.value("args", nlohmann::json::object());
    if (!e.contains("ph") || !e["ph"].is_string()) return bad("an event without \"ph\"");
    if (e["ph"] == "M" && e.value("name", nlohmann::json()) == "process_name" && args.is_object() && args.contains("started") &&
        args["started"].is_string() && (started.empty() || args["started"].get<std::string>() < started))
      started = args["started"].get<std::string>();
    if (e["ph"] != "X") continue;
    auto has = [&](const nlohmann::json& o, const char* key, auto is) { return o.contains(key) && (o[key].*is)(); };
    using J = nlohmann::json;
    if (!has(e, "ts", &J::is_number_integer) || !has(e, "dur", &J::is_number_integer) ||
        !has(e, "pid", &J::is_number_integer) || !args.is_object() || !has(args, "job", &J::is_number_unsigned) ||
        !has(e, "name", &J::is_string) || !has(e, "cat", &J::is_string))
      return bad("a complete event without an integer ts, dur, pid, a name, cat or args.job: " +
                 util::shorten(e.dump(), 200));
    Event ev{e["ts"].get<long long>(), e["dur"].get<long long>(), e["pid"].get<long long>(), args["job"].get<size_t>(), {}};
    ev.j.name = e["name"].get<std::string>();
    ev.j.kind = e["cat"].get<std::string>();
    auto text = [&](const char* key, const char* fallback) {
      return has(args, key, &J::is_string) ? args[key].get<std::string>() : std::string(fallback);
    };
    ev.j.target = text("target", "");
    ev.j.status = text("status", "ran");
    ev.j.where = text("where", "");
    ev.j.reached = true;
    if (args.contains("cpu_s") && args["cpu_s"].is_number()) ev.j.cpu_s = args["cpu_s"].get<double>();
    for (const auto& d : args.value("deps", nlohmann::json::array()))
      if (d.is_number_unsigned()) ev.j.deps.push_back(d.get<size_t>());  // this process's job ids, for now
    pids.insert(ev.pid);
    events.push_back(std::move(ev));
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
  Timeline t;
  t.title = fmt::format("{}: {} process{}", title, pids.size(), pids.size() == 1 ? "" : "es");
  t.flow = "launcher";
  const long long first = events.empty() ? 0 : events.front().ts;
  t.origin = std::chrono::steady_clock::time_point(std::chrono::microseconds(first));
  std::map<std::pair<long long, size_t>, size_t> index;  // (pid, job) -> place in t.jobs
  for (size_t i = 0; i < events.size(); ++i) index[{events[i].pid, events[i].job}] = i;
  long long last = first;
  for (auto& ev : events) {
    ev.j.start_s = static_cast<double>(ev.ts - first) / 1e6;
    ev.j.duration_s = static_cast<double>(ev.dur) / 1e6;
    std::vector<size_t> deps;
    for (size_t d : ev.j.deps)
      if (auto it = index.find({ev.pid, d}); it != index.end()) deps.push_back(it->second);
    ev.j.deps = std::move(deps);
    if (ev.j.status == "failed") t.result = "failed";
    last = std::max(last, ev.ts + ev.dur);
    t.jobs.push_back(std::move(ev.j));
  }
  t.duration_s = static_cast<double>(last - first) / 1e6;
  // The page shows the start as written; a trace without one says "now".
  t.started = std::chrono::system_clock::now();
  t.started_text = started;
  return t;
}

}  // namespace ob::report
