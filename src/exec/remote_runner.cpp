// Remote execution of compile jobs (exec/remote_runner.hpp, docs/DISTRIBUTED.md).
#include "offload_build/exec/remote_runner.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "offload_build/config/config.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/toolchain/frontends/clang_scan.hpp"
#include "offload_build/toolchain/stable_names.h"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/secrets.hpp"
#include "offload_build/util/size_text.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::exec {

namespace {

constexpr std::string_view kRedacted = "***";
// Where files from outside the input root's directory (the stable-names
// library) are put in it.
constexpr std::string_view kSupportDir = ".offload-build-remote";
// The action's environment variable holding ActionKey::stamp.
constexpr std::string_view kKeyVariable = "OFFLOAD_BUILD_ACTION_KEY";

std::optional<int> parse_duration_ms(std::string_view v) {
  int mult = 1;
  if (v.ends_with("ms")) v.remove_suffix(2);
  else if (v.ends_with("s")) v.remove_suffix(1), mult = 1000;
  else if (v.ends_with("m")) v.remove_suffix(1), mult = 60000;
  long n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n <= 0 || n > 24L * 3600 * 1000 / mult) return std::nullopt;
  return int(n * mult);
}

// ${VAR} in a header value from the environment (a credential: no child sees VAR).
std::optional<std::string> expand(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    if (v.substr(i, 2) == "${") {
      const size_t end = v.find('}', i);
      if (end == std::string_view::npos) return std::nullopt;
      const std::string name(v.substr(i + 2, end - i - 2));
      util::hide_from_children(name);
      auto value = config::env(name.c_str());
      if (!value) return std::nullopt;
      out += *value;
      i = end + 1;
    } else {
      out += v[i++];
    }
  }
  return out;
}

}  // namespace

namespace {

constexpr std::string_view kAttributes[] = {"instance", "jobs", "connect-timeout", "call-timeout",
                                            "execution-timeout", "max-output-size", "header"};

// Whether `attr` ("name=value") names an attribute we know. Any other text
// after a '|' may be the rest of a header value that held a '|'.
bool known_attribute(std::string_view attr) {
  const std::string_view name = attr.substr(0, attr.find('='));
  return attr.find('=') != std::string_view::npos &&
         std::find(std::begin(kAttributes), std::end(kAttributes), name) != std::end(kAttributes);
}

}  // namespace

std::string redact_remote_execution(std::string_view text) {
  std::string out;
  size_t bar = text.find('|');
  out = std::string(text.substr(0, bar));
  while (bar != std::string_view::npos) {
    const size_t next = text.find('|', bar + 1);
    std::string_view attr = text.substr(bar + 1, next == std::string_view::npos ? next : next - bar - 1);
    out += '|';
    if (attr.starts_with("header=")) {
      const size_t colon = attr.find(':');
      out += std::string(attr.substr(0, colon == std::string_view::npos ? attr.size() : colon + 1));
      out += kRedacted;
    } else if (!known_attribute(attr)) {
      out += kRedacted;
    } else {
      out += attr;
    }
    bar = next;
  }
  return out;
}

void hide_remote_execution_secrets(const config::Config& config) {
  for (const auto& value : config.all("remote_execution")) {
    if (value.origin == config::Origin::Environment) util::hide_from_children("OFFLOAD_BUILD_REMOTE_EXECUTION");
    for (size_t at = value.text.find("${"); at != std::string::npos; at = value.text.find("${", at + 2)) {
      const size_t end = value.text.find('}', at);
      if (end == std::string::npos) break;
      util::hide_from_children(value.text.substr(at + 2, end - at - 2));
    }
  }
}

Result<RemoteExecutionConfig> parse_remote_execution(std::string_view text) {
  auto fail = [&](const std::string& why) {
    return Error::usage(fmt::format("remote_execution \"{}\": {}", redact_remote_execution(text), why));
  };
  RemoteExecutionConfig c;
  size_t bar = text.find('|');
  std::string_view url = text.substr(0, bar);
  std::string_view rest;
  if (url.starts_with("grpc://")) rest = url.substr(7);
  else if (url.starts_with("grpcs://")) rest = url.substr(8), c.endpoint.tls = true;
  else return fail("unsupported URL; use grpc://HOST:PORT or grpcs://HOST:PORT");
  while (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.empty() || rest.find('/') != std::string_view::npos || rest.find('@') != std::string_view::npos)
    return fail("want grpc://HOST:PORT (credentials go in |header=NAME:VALUE)");
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || rest.back() == ']')
    return fail("the port is missing (grpc://HOST:PORT)");
  long port = 0;
  std::string_view port_text = rest.substr(colon + 1);
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port <= 0 || port > 65535)
    return fail("the port is not a number from 1 to 65535");
  c.endpoint.target = std::string(rest);
  while (bar != std::string_view::npos) {
    const size_t next = text.find('|', bar + 1);
    std::string_view attr = text.substr(bar + 1, next == std::string_view::npos ? next : next - bar - 1);
    bar = next;
    const size_t eq = attr.find('=');
    const std::string_view name = attr.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : attr.substr(eq + 1);
    if (name == "instance") {
      c.endpoint.instance = std::string(value);
    } else if (name == "jobs") {
      size_t n = 0;
      auto [e, err] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (err != std::errc() || e != value.data() + value.size() || n == 0 || n > 4096)
        return fail("jobs wants a whole number from 1 to 4096");
      c.jobs = n;
    } else if (name == "connect-timeout" || name == "call-timeout" || name == "execution-timeout") {
      auto ms = parse_duration_ms(value);
      if (!ms) return fail(fmt::format("{} wants a duration (250ms, 2s, 10m)", name));
      (name == "connect-timeout" ? c.endpoint.connect_timeout_ms
       : name == "call-timeout"  ? c.endpoint.call_timeout_ms
                                 : c.endpoint.execution_timeout_ms) = *ms;
    } else if (name == "max-output-size") {
      auto bytes = util::parse_size(value);
      if (!bytes || *bytes < 1024) return fail("max-output-size wants a size of at least 1K (256M, 1G)");
      c.endpoint.max_blob_bytes = *bytes;
    } else if (name == "header") {
      const size_t sep = value.find(':');
      if (sep == std::string_view::npos || sep == 0) return fail("header wants NAME:VALUE");
      std::string key(value.substr(0, sep));
      for (char& ch : key) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      auto v = expand(value.substr(sep + 1));
      if (!v) return fail(fmt::format("header {}: an unset variable or an unclosed ${{ in its value", key));
      c.endpoint.headers.emplace_back(key, *v);
    } else {
      // Its name only when it looks like one (lower-case words): the text may
      // be the rest of a header value holding a '|'.
      const bool quotable = eq != std::string_view::npos && !name.empty() && name.size() <= 40 &&
                            name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string_view::npos;
      return fail(fmt::format("{}; known: instance, jobs, connect-timeout, call-timeout, execution-timeout, "
                              "max-output-size, header (a header value holding '|' goes in a ${{VAR}})",
                              quotable ? fmt::format("unknown attribute \"{}\"", name)
                                       : std::string("an attribute that is not NAME=VALUE")));
    }
  }
  c.display = redact_remote_execution(text);
  return c;
}

std::optional<EngineCache> parse_engine_cache(std::string_view text) {
  if (text == "use") return EngineCache::Use;
  if (text == "trusted") return EngineCache::Trusted;
  if (text == "execute") return EngineCache::Execute;
  if (text == "off") return EngineCache::Off;
  return std::nullopt;
}

std::string_view ran_where_name(RanWhere where) {
  switch (where) {
    case RanWhere::Local: return "local";
    case RanWhere::Remote: return "remote";
    case RanWhere::EngineCache: return "engine-cache";
    case RanWhere::Fallback: return "local-fallback";
  }
  return "";
}

RemoteNotes remote_notes(const RemoteRunner& runner, const plan::Plan& plan) {
  RemoteNotes notes;
  for (const auto& job : plan.jobs)
    if (auto n = runner.note(job.id)) notes[job.id] = *n;
  return notes;
}

namespace {

// A remote job's queue and run times as the engine reported them, in parentheses.
std::string engine_times(const RemoteJobNote& n) {
  if (n.queued_s == 0 && n.executed_s == 0) return "(the engine gave no times)";
  return fmt::format("(queued {:.2f} s, ran {:.2f} s)", n.queued_s, n.executed_s);
}

}  // namespace

void explain_remote(const plan::Plan& plan, const RemoteNotes& notes, std::ostream& out) {
  for (const auto& [id, n] : notes) {
    std::string line = fmt::format("offload-build: explain: {}: ", plan.jobs[id].describe(plan.cwd));
    switch (n.where) {
      case RanWhere::Remote: line += "executed remotely " + engine_times(n); break;
      case RanWhere::EngineCache: line += "served by the engine's action cache"; break;
      case RanWhere::Fallback: line += "ran locally after all: " + n.why; break;
      case RanWhere::Local:
        line += n.why.empty() ? "ran locally (not a job remote execution sends)" : "ran locally: " + n.why;
        break;
    }
    out << line << '\n';
  }
}

nlohmann::json remote_note_json(const RemoteJobNote& n) {
  nlohmann::json e{{"where", ran_where_name(n.where)}};
  if (n.where == RanWhere::Remote || n.where == RanWhere::EngineCache) {
    e["queued_s"] = n.queued_s;
    e["executed_s"] = n.executed_s;
  }
  if (!n.why.empty()) e["why"] = n.why;
  return e;
}

std::function<std::optional<nlohmann::json>(const plan::Job&)> remote_execution_of(const RemoteNotes& notes) {
  if (notes.empty()) return {};
  return [&notes](const plan::Job& job) -> std::optional<nlohmann::json> {
    auto it = notes.find(job.id);
    if (it == notes.end()) return std::nullopt;
    return remote_note_json(it->second);
  };
}

void mark_remote(report::Timeline& timeline, const RemoteNotes& notes) {
  for (const auto& [id, n] : notes) {
    if (id >= timeline.jobs.size()) continue;
    std::string& where = timeline.jobs[id].where;
    switch (n.where) {
      case RanWhere::Remote: where = "remote " + engine_times(n); break;
      case RanWhere::EngineCache: where = "engine cache"; break;
      case RanWhere::Fallback: where = "local after all: " + n.why; break;
      case RanWhere::Local: where = "local"; break;
    }
  }
}

namespace {

std::string sha256_of(const void* data, size_t size) {
  return storage::sha256_hex(std::string_view(static_cast<const char*>(data), size));
}

bool under(const fs::path& p, const fs::path& dir) {
  auto [d, q] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
  return d == dir.end();
}

fs::path common_dir(const fs::path& a, const fs::path& b) {
  fs::path out;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end() && *i == *j; ++i, ++j) out /= *i;
  return out;
}

// A counting semaphore that gives up when told to stop.
class Slots {
 public:
  explicit Slots(size_t n) : free_(n) {}
  bool acquire(const std::atomic<bool>& stop) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return free_ > 0 || stop; });
    if (stop) return false;
    --free_;
    return true;
  }
  void release() {
    {
      std::lock_guard lock(m_);
      ++free_;
    }
    cv_.notify_one();
  }
  void wake_all() { cv_.notify_all(); }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  size_t free_;
};

// The module, opened once per process.
struct Module {
  void* handle = nullptr;
  reapi::OpenFn open = nullptr;
};

Result<Module> load_module() {
  static Module module;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    auto path = toolchain::find_support_file(reapi::kModuleName);
    if (!path) {
      error = fmt::format("remote_execution: {} is not installed next to offload-build (build it with "
                          "libgrpc++-dev, protobuf-compiler-grpc and bazel-bootstrap-source installed: "
                          "scripts/setup.sh; docs/DISTRIBUTED.md)",
                          reapi::kModuleName);
      return;
    }
    module.handle = dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module.handle) {
      error = fmt::format("remote_execution: cannot load {}: {}", path->string(), dlerror());
      return;
    }
    module.open = reinterpret_cast<reapi::OpenFn>(dlsym(module.handle, reapi::kOpenSymbol));
    if (!module.open) error = fmt::format("remote_execution: {} has no {}", path->string(), reapi::kOpenSymbol);
  });
  if (!module.open) return Error::usage(error);
  return module;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// An engine's text (a status, a worker's answer) in one of our lines: one
// line, no control sequences, at most 300 bytes.
std::string printable(const std::string& text) {
  std::string one = util::foreign_text(text, "engine");
  for (char& c : one)
    if (c == '\n' || c == '\t') c = ' ';
  return util::shorten(one, 300);
}

// The compiler a job runs, by absolute path (the worker runs the same
// compiler at the same path): a bare name (`make CC="offload-build
// clang++-22"`, an MPI wrapper's OMPI_CXX) is looked up in PATH as exec does,
// a relative path from the plan's directory; nullopt when not found.
std::optional<fs::path> compiler_path(const plan::Job& job, const fs::path& cwd) {
  if (job.argv.empty()) return std::nullopt;
  const fs::path p(job.argv[0]);
  if (p.is_absolute()) return p;
  if (job.argv[0].find('/') != std::string::npos) return (cwd / p).lexically_normal();
  return toolchain::find_in_path(job.argv[0], config::env("PATH").value_or(""));
}

// An empty input in the compile's own directory (run_remote).
constexpr const char* kCwdMarker = ".offload-build-cwd";

constexpr const char* kFortranLocal =
    "a Fortran compile: the module files one writes are the next one's inputs, so Fortran compiles run here";

// Why a job is not one remote execution sends, or "" when it is.
std::string kept_local(const plan::Job& job, const fs::path& cwd) {
  if (job.kind != plan::JobKind::DeviceCompile && job.kind != plan::JobKind::HostIr &&
      job.kind != plan::JobKind::HostCompile)
    return fmt::format("a {} job: remote execution sends compiles", plan::job_kind_name(job.kind));
  if (job.key_material) return "its planner keys it by what the worker cannot see (cargo's device pass)";
  if (!compiler_path(job, cwd))
    return fmt::format("its compiler {} is not found in PATH", job.argv.empty() ? "(none)" : job.argv[0]);
  // A Fortran compile's module files are the next compile's inputs (docs/DISTRIBUTED.md).
  if (manifest::language_from_extension(job.source) == manifest::Language::Fortran) return kFortranLocal;
  return {};
}

std::string invocation_id();
Result<std::unique_ptr<reapi::Client>> open_engine(RemoteRunnerSetup& setup);

class Runner final : public RemoteRunner {
 public:
  Runner(RemoteRunnerSetup setup, std::unique_ptr<reapi::Client> client)
      : setup_(std::move(setup)),
        client_(std::move(client)),
        opened_(client_ != nullptr),
        local_(std::max<size_t>(1, setup_.local_jobs)),
        done_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    process::install_signal_handlers();
    const plan::Plan& plan = *setup_.plan;
    root_ = plan.cwd;
    for (const auto& d : plan.base_dirs) root_ = common_dir(root_, d);
    if (!plan.name_anchor.empty()) root_ = common_dir(root_, plan.name_anchor);
    if (!plan.build_dir.empty()) root_ = common_dir(root_, plan.build_dir);
  }
  ~Runner() override {
    stop_all();
    if (done_fd_ >= 0) close(done_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
  }

  Result<void> start(const JobView& view) override {
    auto work = std::make_shared<Work>(Work{view.job, view.command, view.temps, std::nullopt});
    std::lock_guard lock(m_);
    ++running_;
    threads_[view.job.id] = std::thread([this, work] { finish(run(*work)); });
    return {};
  }

  std::optional<Completion> wait_any() override {
    for (;;) {
      {
        std::unique_lock lock(m_);
        if (!done_.empty()) {
          Completion c = std::move(done_.front());
          done_.pop_front();
          if (running_ > 0) --running_;  // started and not yet reported: running() counts it until now
          auto t = threads_.find(c.job);
          if (t != threads_.end()) {
            std::thread th = std::move(t->second);
            threads_.erase(t);
            lock.unlock();
            th.join();
          }
          return c;
        }
        if (running_ == 0) return std::nullopt;
      }
      if (process::interrupted() || take(wake_fd_)) return std::nullopt;
      pollfd pfd[3] = {{process::wakeup_fd(), POLLIN, 0}, {done_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      poll(pfd, 3, 200);
      process::drain_wakeups();
      take(done_fd_);
    }
  }

  void wake() override { poke(wake_fd_); }

  void stop_all() override {
    stopping_ = true;
    {
      std::lock_guard lock(open_m_);
      if (client_) client_->cancel();
    }
    local_.wake_all();
    {
      std::lock_guard lock(m_);
      for (pid_t pid : pids_) kill(pid, SIGTERM);
    }
    std::map<plan::JobId, std::thread> threads;
    {
      std::lock_guard lock(m_);
      threads.swap(threads_);
    }
    for (auto& [id, t] : threads) t.join();
    std::lock_guard lock(m_);
    done_.clear();
    running_ = 0;
  }

  size_t running() const override {
    std::lock_guard lock(m_);
    return running_;
  }

  std::optional<RemoteJobNote> note(plan::JobId job) const override {
    std::lock_guard lock(m_);
    auto it = notes_.find(job);
    if (it == notes_.end()) return std::nullopt;
    return it->second;
  }

  size_t remote_jobs() const override { return setup_.config.jobs; }

  Counts counts() const override {
    std::lock_guard lock(m_);
    return counts_;
  }

 private:
  struct Work {
    plan::Job job;
    process::Command command;
    std::vector<fs::path> temps;
    std::optional<fs::path> scan_lookups;  // the dependency scan's record of lookups
  };

  static void poke(int fd) {
    const uint64_t one = 1;
    if (fd >= 0) {
      ssize_t ignored = write(fd, &one, sizeof one);
      (void)ignored;
    }
  }
  static bool take(int fd) {
    uint64_t n = 0;
    return fd >= 0 && read(fd, &n, sizeof n) == sizeof n;
  }

  void finish(Completion c) {
    {
      std::lock_guard lock(m_);
      done_.push_back(std::move(c));
    }
    poke(done_fd_);
  }

  void record(plan::JobId job, RemoteJobNote note, uint64_t uploaded = 0) {
    std::lock_guard lock(m_);
    switch (note.where) {
      case RanWhere::Local: ++counts_.local; break;
      case RanWhere::Remote: ++counts_.remote; break;
      case RanWhere::EngineCache: ++counts_.engine_cache; break;
      case RanWhere::Fallback: ++counts_.fallback; break;
    }
    counts_.uploaded_bytes += uploaded;
    notes_[job] = std::move(note);
  }

  // A job: remotely when it can go, else (or after an engine failure, or a
  // remote compile that failed) on this machine.
  Completion run(Work& w) {
    const std::string local_why = kept_local(w.job, setup_.plan->cwd);
    const bool sends = local_why.empty();
    if (local_why == kFortranLocal && !fortran_said_.exchange(true) && setup_.warn)
      setup_.warn(fmt::format("remote_execution {}: {} (docs/DISTRIBUTED.md)", setup_.config.display, local_why));
    if (sends && !engine_down_ && !stopping_) {
      if (auto refused = open()) {
        record(w.job.id, {RanWhere::Local, 0, 0, "remote execution is refused: " + *refused});
        return Completion{w.job.id, 2, {}, 0, false, *refused};
      }
    }
    if (sends && !engine_down_ && !stopping_) {
      std::string why;
      auto done = run_remote(w, why);
      if (w.scan_lookups) {
        // The remote result's record of lookups: the scan's, where the job
        // cache reads the depfile's (OB_LOOKUPS_ENV names the depfile's temporary).
        std::error_code ec;
        if (done && done->exit_code == 0)
          fs::rename(*w.scan_lookups, fs::path(w.temps.back()).concat(OB_LOOKUPS_SUFFIX), ec);
        fs::remove(*w.scan_lookups, ec);
      }
      if (done) return *done;
      record(w.job.id, {RanWhere::Fallback, 0, 0, why});
    } else if (sends && !down_earlier_.empty()) {
      record(w.job.id, {RanWhere::Fallback, 0, 0, down_earlier_});
    } else if (sends) {
      record(w.job.id, {RanWhere::Fallback, 0, 0,
                        stopping_ ? "interrupted" : "the engine failed earlier in this build (warned then)"});
    } else {
      record(w.job.id, {RanWhere::Local, 0, 0, local_why});
    }
    return run_local(w.job.id, w.command);
  }

  // The command on this machine, in a local slot, its output buffered.
  Completion run_local(plan::JobId id, const process::Command& cmd) {
    Completion c{id, 1, {}};
    if (!local_.acquire(stopping_)) {
      c.exit_code = 130;
      return c;
    }
    const int out = memfd_create("offload-build-job-output", MFD_CLOEXEC);
    auto pid = process::spawn(cmd, process::Stdio{-1, out, out});
    if (!pid) {
      local_.release();
      if (out >= 0) close(out);
      c.exit_code = 127;
      c.error = pid.error().message;
      return c;
    }
    {
      std::lock_guard lock(m_);
      pids_.insert(*pid);
    }
    c.exit_code = process::wait_exit_code(*pid);
    {
      std::lock_guard lock(m_);
      pids_.erase(*pid);
    }
    local_.release();
    if (out >= 0) {
      char buf[8192];
      for (off_t at = 0;;) {
        const ssize_t n = pread(out, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        c.output.append(buf, size_t(n));
        at += n;
      }
      close(out);
    }
    return c;
  }

  // Run a scan command locally: its exit code, its output dropped.
  bool run_scan(const process::Command& cmd) {
    Completion c = run_local(0, cmd);
    return c.exit_code == 0;
  }

  // An absolute path as the action names it: relative to the working directory.
  std::string from_cwd(const fs::path& p, const fs::path& cwd) const {
    return p.lexically_normal().lexically_relative(cwd).string();
  }

  // `arg` with every absolute path under `root` (at its start, after '=', ','
  // or ':', or after a flag's letters: -I/x, -Wl,/x) relative to `cwd`.
  std::string rewrite(const std::string& arg, const fs::path& root, const fs::path& cwd) const {
    const std::string r = root.string();
    std::string out;
    size_t i = 0;
    while (i < arg.size()) {
      const size_t p = arg.find(r, i);
      if (p == std::string::npos) break;
      const size_t after = p + r.size();
      bool starts = p == 0 || arg[p - 1] == '=' || arg[p - 1] == ',' || arg[p - 1] == ':';
      if (!starts && arg[0] == '-') {
        starts = true;
        for (size_t k = 1; k < p; ++k)
          if (!std::isalpha(static_cast<unsigned char>(arg[k])) && arg[k] != '-' && arg[k] != '_') starts = false;
      }
      const bool ends = after == arg.size() || arg[after] == '/' || arg[after] == ',' || arg[after] == ':';
      if (!starts || !ends) {
        out += arg.substr(i, after - i);
        i = after;
        continue;
      }
      size_t stop = arg.find_first_of(",:", after);
      if (stop == std::string::npos) stop = arg.size();
      out += arg.substr(i, p - i);
      out += from_cwd(arg.substr(p, stop - p), cwd);
      i = stop;
    }
    out += arg.substr(i);
    return out;
  }

  // The first symlink on `p`'s way below `root` (a symlinked /tmp or home
  // above the input root changes nothing), or nullopt.
  static std::optional<fs::path> symlink_on_way(const fs::path& p, const fs::path& root) {
    fs::path at = root;
    for (const auto& part : p.lexically_relative(root)) {
      at /= part;
      std::error_code ec;
      if (fs::is_symlink(at, ec)) return at;
    }
    return std::nullopt;
  }

  bool is_system(const fs::path& p) const {
    for (const auto& d : setup_.system_dirs)
      if (under(p, d)) return true;
    return false;
  }

  // The digest of a local file, remembered by path, size and mtime.
  std::optional<reapi::Digest> digest_of(const fs::path& p) {
    struct stat st{};
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    const std::string key = fmt::format("{}\n{}\n{}.{}", p.string(), st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    {
      std::lock_guard lock(m_);
      auto it = digests_.find(key);
      if (it != digests_.end()) return it->second;
    }
    auto hash = storage::sha256_file(p);
    if (!hash) return std::nullopt;
    reapi::Digest d{*hash, int64_t(st.st_size)};
    std::lock_guard lock(m_);
    digests_[key] = d;
    return d;
  }

  // Try the job on the engine: its completion, or nullopt and why it runs
  // locally instead.
  std::optional<Completion> run_remote(Work& w, std::string& why) {
    const plan::Job& job = w.job;
    const process::Command& cmd = w.command;
    const fs::path cwd = cmd.cwd.empty() ? fs::current_path() : fs::path(cmd.cwd);
    // What -march=native means is this machine's CPU: a worker would build for its own.
    if (auto native = toolchain::clang_cli::machine_dependent_option(cmd.argv)) {
      why = fmt::format("{} means this machine's CPU or GPU, which a worker's may not be", *native);
      return std::nullopt;
    }
    std::vector<fs::path> files;
    for (const auto& in : job.inputs) files.push_back(in.is_absolute() ? in : cwd / in);
    if (job.depfile) {
      // Every file the compile reads, from a scan with its own flags and target.
      const fs::path scan = fs::path(w.temps.back()).concat(".scan");
      auto argv = toolchain::clang_cli::dependency_scan_argv(cmd.argv, scan.string());
      if (!argv) {
        why = "its command is not a compile the dependency scan knows";
        return std::nullopt;
      }
      process::Command s = cmd;
      s.argv = *argv;
      // The lookups that found nothing (record_lookups) are the
      // preprocessor's: the scan's, with the compile's flags and target, made
      // here on this machine's paths. The scan records them (the preload
      // library's record of the depfile it writes); a result from the engine
      // is stored with them (run), so it serves the next build
      // from the local cache and a header created where it looked misses.
      std::error_code ec;
      for (auto& [k, v] : s.env)
        if (k == OB_LOOKUPS_ENV && v) {
          v = scan.string();
          w.scan_lookups = fs::path(scan).concat(OB_LOOKUPS_SUFFIX);
          fs::remove(*w.scan_lookups, ec);
        }
      const bool ok = run_scan(s);
      auto text = util::read_regular_file(scan, 64ull << 20, "a dependency scan");
      fs::remove(scan, ec);
      if (!ok || !text) {
        why = "its dependency scan failed";
        return std::nullopt;
      }
      for (const auto& dep : setup_.parse_depfile(*text)) {
        fs::path p(dep);
        files.push_back(p.is_absolute() ? p : cwd / p);
      }
    }
    // The input root: the plan's root, widened to hold every file that is not the worker's own.
    fs::path root = root_;
    std::vector<fs::path> shipped, reads;
    std::set<fs::path> seen;
    for (auto& f : files) {
      f = f.lexically_normal();
      if (!seen.insert(f).second) continue;
      reads.push_back(f);
      if (is_system(f)) continue;
      root = common_dir(root, f);
      shipped.push_back(f);
    }
    // A file reached through a symlink is a regular file on the worker: a
    // header reached by two paths is two files there (#pragma once fails).
    for (const auto& f : shipped)
      if (auto link = symlink_on_way(f, root)) {
        why = fmt::format("{} is reached through the symlink {}, which the worker would see as another file",
                          f.string(), link->string());
        return std::nullopt;
      }
    const ActionKey key = setup_.action_key ? setup_.action_key(job, reads) : ActionKey{};
    for (const auto& t : w.temps) root = common_dir(root, t.lexically_normal().parent_path());
    // The action names each output by its final path, not by the executor's
    // temporary (which holds our PID): the same job is the same action in
    // every build, so the engine's action cache serves it. A worker takes
    // outputs from below the action's working directory only: with one
    // elsewhere (-o ../build/x.o), the action runs in the directory above
    // both and enters the compile's own with `env -C`.
    std::vector<fs::path> finals = job.outputs;
    if (job.depfile) finals.push_back(*job.depfile);
    if (finals.size() != w.temps.size()) {
      why = "its outputs and temporaries do not pair";
      return std::nullopt;
    }
    fs::path run_dir = cwd.lexically_normal();
    for (auto& f : finals) {
      f = (f.is_absolute() ? f : cwd / f).lexically_normal();
      run_dir = common_dir(run_dir, f.parent_path());
    }
    root = common_dir(root, run_dir);
    // Kernel names come from each file's place relative to the base
    // directories; a file outside them is named by its absolute path, which
    // on the worker is another: the job stays here (with its host side).
    if (job.stable_names) {
      const auto& bases = setup_.plan->base_dirs;
      for (const auto& f : shipped)
        if (std::none_of(bases.begin(), bases.end(), [&](const fs::path& b) { return under(f, b.lexically_normal()); })) {
          why = fmt::format("{} is outside base_dir: its kernel names would differ on the worker", f.string());
          if (!outside_base_said_.exchange(true) && setup_.warn)
            setup_.warn(fmt::format("remote_execution {}: {} is outside base_dir, so compiles that read it run "
                                    "locally (kernel names come from file places); set base_dir to the project's "
                                    "directory (docs/DISTRIBUTED.md)",
                                    setup_.config.display, f.string()));
          return std::nullopt;
        }
    }
    if (root.empty() || root == root.root_path()) {
      why = "it reads files outside any one directory but /";
      return std::nullopt;
    }
    reapi::Action action;
    action.working_directory = from_cwd(run_dir, root);
    if (action.working_directory == ".") action.working_directory.clear();
    for (const auto& f : shipped) {
      auto d = digest_of(f);
      if (!d) {
        why = fmt::format("{} cannot be read", f.string());
        return std::nullopt;
      }
      struct stat st{};
      ::stat(f.c_str(), &st);
      action.inputs.push_back({from_cwd(f, root), *d, f, (st.st_mode & S_IXUSR) != 0});
    }
    std::vector<std::pair<std::string, std::string>> renamed;
    for (size_t i = 0; i < finals.size(); ++i) renamed.emplace_back(from_cwd(w.temps[i], cwd), from_cwd(finals[i], cwd));
    if (run_dir != cwd.lexically_normal()) action.argv = {"/usr/bin/env", "-C", from_cwd(cwd, run_dir)};
    action.argv.push_back(compiler_path(job, setup_.plan->cwd)->string());
    for (size_t i = 1; i < cmd.argv.size(); ++i) {
      std::string arg = rewrite(cmd.argv[i], root, cwd);
      for (const auto& [temp, final_path] : renamed)
        for (size_t at; (at = arg.find(temp)) != std::string::npos;) arg.replace(at, temp.size(), final_path);
      action.argv.push_back(std::move(arg));
    }
    // The environment: the job's own, paths made relative, files from outside
    // the root (the stable-names library) shipped under kSupportDir.
    std::map<std::string, std::string> env{{"PATH", "/usr/bin:/bin"}};
    // Not the record of lookups that found nothing (record_lookups): what a
    // compile looks for on the worker says nothing of this machine's files,
    // and its per-build path would make every action a new one. The result
    // is stored with the local dependency scan's record instead (above).
    const bool lookups_only = std::any_of(cmd.env.begin(), cmd.env.end(), [](const auto& e) {
      return e.first == OB_LOOKUPS_ENV_ONLY;
    });
    // The driver's environment (CPATH, SOURCE_DATE_EPOCH...) first: the job's own may override it.
    std::vector<std::pair<std::string, std::optional<std::string>>> sent(key.env.begin(), key.env.end());
    sent.insert(sent.end(), cmd.env.begin(), cmd.env.end());
    for (const auto& [k, v] : sent) {
      if (k == OB_LOOKUPS_ENV || k == OB_LOOKUPS_ENV_ONLY || (lookups_only && k == "LD_PRELOAD")) continue;
      if (!v) {
        env.erase(k);
        continue;
      }
      // A preload library of the user's (a profiler's collector a module
      // preloads, perhaps licensed) never leaves this machine.
      if (k == "LD_PRELOAD")
        for (const auto& part : util::split(*v, ':'))
          if (!part.empty() && fs::path(part) != toolchain::preload_library()) {
            why = fmt::format("its LD_PRELOAD names {}, not offload-build's library: a preloaded library of "
                              "yours is never sent to a worker",
                              part);
            return std::nullopt;
          }
      std::vector<std::string> parts;
      for (const auto& part : util::split(*v, ':')) {
        fs::path p(part);
        if (!p.is_absolute() || is_system(p)) {
          parts.push_back(part);
        } else if (under(p.lexically_normal(), root)) {
          parts.push_back(from_cwd(p, cwd));
        } else if (fs::is_regular_file(p)) {
          auto d = digest_of(p);
          if (!d) {
            why = fmt::format("{} cannot be read", p.string());
            return std::nullopt;
          }
          const std::string in_root = std::string(kSupportDir) + "/" + p.filename().string();
          action.inputs.push_back({in_root, *d, p, false});
          std::string rel = from_cwd(root / in_root, cwd);
          parts.push_back(rel.find('/') == std::string::npos ? "./" + rel : rel);
        } else {
          why = fmt::format("its environment names {}, outside the input root", p.string());
          return std::nullopt;
        }
      }
      env[k] = util::join(parts, ":");
    }
    // The rest of the local key, so the engine's cache never answers what the local one would not.
    if (!key.stamp.empty()) env[std::string(kKeyVariable)] = key.stamp;
    // `env -C` itself runs in the directory above: the preload (a path from
    // the compile's directory) is the compiler's alone, set by env.
    if (auto pre = env.find("LD_PRELOAD"); pre != env.end() && run_dir != cwd.lexically_normal()) {
      action.argv.insert(action.argv.begin() + 3, "LD_PRELOAD=" + pre->second);
      env.erase(pre);
    }
    action.env.assign(env.begin(), env.end());
    action.do_not_cache = key.do_not_cache || setup_.config.engine_cache == EngineCache::Off;
    action.skip_cache_lookup = setup_.config.engine_cache == EngineCache::Execute;
    for (const auto& f : finals) action.output_files.push_back(from_cwd(f, run_dir));
    action.mnemonic = std::string(plan::job_kind_name(job.kind));
    action.target_id = job.describe(setup_.plan->cwd);
    const std::vector<std::string> in_order = action.output_files;
    // A worker makes the directories of the inputs and above the outputs
    // only: the compile's own may hold no input (a host codegen reads its IR
    // from the output's side), so an empty file there makes it.
    std::optional<fs::path> marker;
    if (run_dir != cwd.lexically_normal()) {
      marker = fs::path(w.temps.back()).concat(".empty");
      auto made = util::write_file_atomic(*marker, "");
      auto d = made ? digest_of(*marker) : std::nullopt;
      if (!d) {
        why = fmt::format("{} cannot be written", marker->string());
        return std::nullopt;
      }
      action.inputs.push_back({from_cwd(cwd / kCwdMarker, root), *d, *marker, false});
    }
    std::sort(action.output_files.begin(), action.output_files.end());

    reapi::ActionResult result;
    std::string error;
    const bool ran = client_->run(action, result, error);
    if (marker) {
      std::error_code ec;
      fs::remove(*marker, ec);
    }
    if (!ran) {
      if (stopping_) {
        why = "interrupted";
        return std::nullopt;
      }
      engine_failed(error);
      why = "the engine failed: " + printable(error);
      return std::nullopt;
    }
    if (result.exit_code != 0) {
      // Rerun here: the error is printed as a local one, and a file the scan
      // missed (a computed include) can never make a wrong object.
      why = fmt::format("the remote compile exited with {}", result.exit_code);
      return std::nullopt;
    }
    std::map<std::string, const reapi::OutputFile*> by_path;
    for (const auto& o : result.outputs) by_path[o.path] = &o;
    for (size_t i = 0; i < w.temps.size(); ++i) {
      auto it = by_path.find(in_order[i]);
      if (it == by_path.end()) {
        engine_failed("the result lacks " + in_order[i]);
        why = "the result lacks an output";
        return std::nullopt;
      }
      auto written = util::write_file_atomic(w.temps[i], it->second->content);
      if (!written) {
        why = written.error().message;
        return std::nullopt;
      }
    }
    record(job.id, {result.cached ? RanWhere::EngineCache : RanWhere::Remote, result.queued_s, result.executed_s, {}},
           result.uploaded_bytes);
    // What the compiler printed there: stored and replayed on every later
    // hit, so never a terminal escape, a line posing as ours, or gigabytes.
    std::string printed = util::foreign_text(result.stdout_text + result.stderr_text, "remote");
    if (result.text_dropped)
      printed += fmt::format("offload-build: note: {} more bytes of this remote compile's output were dropped "
                             "(the most kept is {} bytes of stdout and of stderr)\n",
                             result.text_dropped, setup_.config.endpoint.max_text_bytes);
    Completion c{job.id, 0, std::move(printed)};
    return c;
  }

  // The engine, opened on the first job that goes to it (a launcher compile
  // whose jobs all hit never loads the module): nullopt, or why remote
  // execution is refused (the job fails with it). An engine that cannot be
  // reached: one warning, every job runs locally.
  std::optional<std::string> open() {
    std::lock_guard once(open_once_m_);
    if (opened_) return refused_;
    opened_ = true;
    // An engine that failed an earlier compile of this make run is not asked
    // again: its deadlines are paid once per build, not once per compile.
    if (setup_.engine_down && setup_.engine_down(false)) {
      down_earlier_ = "the engine failed earlier in this build (warned then)";
      engine_down_ = true;
      return refused_;
    }
    auto client = open_engine(setup_);
    if (!client) {
      refused_ = client.error().message;
      engine_down_ = true;
    } else if (!*client) {
      engine_down_ = true;
      if (setup_.engine_down) setup_.engine_down(true);
    } else {
      std::lock_guard lock(open_m_);
      client_ = std::move(*client);
    }
    return refused_;
  }

  // The first engine failure: one warning, and no job is sent again this build.
  void engine_failed(const std::string& error) {
    if (engine_down_.exchange(true)) return;
    if (setup_.engine_down) setup_.engine_down(true);
    if (setup_.warn)
      setup_.warn(fmt::format("remote_execution {}: {}; this build's remaining jobs run locally",
                              setup_.config.display, printable(error)));
  }

  RemoteRunnerSetup setup_;
  std::mutex open_once_m_;  // held while the engine is opened
  std::mutex open_m_;       // guards client_ against stop_all
  std::unique_ptr<reapi::Client> client_;
  bool opened_ = false;
  std::optional<std::string> refused_;
  fs::path root_;
  Slots local_;
  int done_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> engine_down_{false};
  std::atomic<bool> outside_base_said_{false};
  std::string down_earlier_;  // set by open() before any job asks: why jobs that would go stay here
  std::atomic<bool> fortran_said_{false};
  mutable std::mutex m_;
  size_t running_ = 0;
  std::deque<Completion> done_;
  std::map<plan::JobId, std::thread> threads_;
  std::set<pid_t> pids_;
  std::map<plan::JobId, RemoteJobNote> notes_;
  std::map<std::string, reapi::Digest> digests_;
  Counts counts_;
};

std::string invocation_id() {
  std::random_device rd;
  return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:08x}{:04x}", rd(), rd() & 0xffff, rd() & 0xfff, rd() & 0xfff,
                     rd(), rd() & 0xffff);
}


// The client: the module opened, the engine's capabilities asked, and the
// worker's compilers checked: nullptr when the engine cannot be reached
// (warned), an error when the module is missing or a compiler differs.
Result<std::unique_ptr<reapi::Client>> open_engine(RemoteRunnerSetup& setup) {
  auto module = load_module();
  if (!module) return module.error();
  setup.config.endpoint.tool_version = OB_VERSION;
  setup.config.endpoint.invocation_id = invocation_id();
  std::string error;
  std::unique_ptr<reapi::Client> client(module->open(&setup.config.endpoint, &sha256_of, &error));
  if (!client) return Error::usage(fmt::format("remote_execution: {}", error));
  const std::string& shown = setup.config.display;
  reapi::Capabilities caps;
  if (!client->capabilities(caps, error)) {
    if (setup.warn) setup.warn(fmt::format("remote_execution {}: {}; the build runs locally", shown, printable(error)));
    return std::unique_ptr<reapi::Client>();
  }
  // Toolchain files (resource headers, device runtimes) are the worker's: its
  // compiler must be ours, at the same path. Asked once per compiler (and,
  // with setup.checked, once per build: a launcher's compiles share it).
  std::set<std::string> compilers;
  for (const auto& job : setup.plan->jobs)
    if (kept_local(job, setup.plan->cwd).empty()) compilers.insert(compiler_path(job, setup.plan->cwd)->string());
  for (const auto& compiler : compilers) {
    auto local = process::capture(process::Command{{compiler, "--version"}, {}, {}}, 30000);
    if (!local || local->exit_code != 0) continue;  // a local problem: the build says it
    const std::string memo = storage::sha256_hex(shown + '\n' + compiler + '\n' + local->out);
    if (setup.checked && setup.checked(memo, false)) continue;
    reapi::Action check;
    check.argv = {compiler, "--version"};
    check.env = {{"PATH", "/usr/bin:/bin"}};
    check.do_not_cache = true;  // a worker's compiler may change: never an old answer
    check.mnemonic = "compiler-check";
    check.target_id = compiler;
    reapi::ActionResult r;
    if (!client->run(check, r, error)) {
      if (setup.warn) setup.warn(fmt::format("remote_execution {}: {}; the build runs locally", shown, printable(error)));
      return std::unique_ptr<reapi::Client>();
    }
    // A worker whose compiler is another (one of a pool, upgraded in place)
    // costs a warning and a local build, as every other engine fault does.
    if (r.exit_code != 0 || r.stdout_text != local->out) {
      if (setup.warn)
        setup.warn(fmt::format(
            "remote_execution {}: the worker's {} is not ours (ours: \"{}\"; the worker's: \"{}\"); remote "
            "execution needs the same compiler at the same path on every worker (docs/DISTRIBUTED.md); "
            "the build runs locally",
            shown, compiler, printable(first_line(local->out)),
            printable(r.exit_code != 0 ? fmt::format("exit {}: {}", r.exit_code, first_line(r.stderr_text))
                                       : first_line(r.stdout_text))));
      return std::unique_ptr<reapi::Client>();
    }
    if (setup.checked) setup.checked(memo, true);
  }
  return client;
}

}  // namespace

Result<std::unique_ptr<RemoteRunner>> make_remote_runner(RemoteRunnerSetup setup) {
  if (setup.lazy) return std::unique_ptr<RemoteRunner>(new Runner(std::move(setup), nullptr));
  auto client = open_engine(setup);
  if (!client) return client.error();
  if (!*client) return std::unique_ptr<RemoteRunner>();
  return std::unique_ptr<RemoteRunner>(new Runner(std::move(setup), std::move(*client)));
}

}  // namespace ob::exec
