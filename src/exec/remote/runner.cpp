// Remote execution of compile jobs (exec/remote/runner.hpp, docs/DISTRIBUTED.md).
#include "offload_build/exec/remote/runner.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/remote/link.hpp"
#include "offload_build/exec/remote/action.hpp"
#include "offload_build/exec/remote/scan_batch.hpp"
#include "offload_build/process/output_capture.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/remote/remote.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/secrets.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::exec {

using report::RanWhere;
using report::RemoteJobNote;
using report::RemoteNotes;

RemoteNotes remote_notes(const RemoteRunner& runner, const plan::Plan& plan) {
  RemoteNotes notes;
  for (const auto& job : plan.jobs)
    if (auto n = runner.note(job.id)) notes[job.id] = *n;
  return notes;
}

namespace {

// A counting semaphore that gives up when told to stop.
class Slots {
 public:
  explicit Slots(size_t n) : free_(n), size_(n) {}
  size_t size() const { return size_; }
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
  const size_t size_;
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }
constexpr const char* kManifestKind = "dependency-manifest";  // the engine's name for a job's manifest
const auto printable = printable_engine_text;

bool compilers_match(reapi::Client& client, const RemoteRunnerSetup& setup);

class Runner final : public RemoteRunner {
 public:
  explicit Runner(RemoteRunnerSetup setup)
      : setup_(std::move(setup)),
        local_(std::max<size_t>(1, setup_.local_jobs)),
        builder_(setup_),
        scans_(
            local_.size(), [this](const process::Command& scan) { return run_local(0, scan).exit_code == 0; },
            setup_.system_dirs) {}
  ~Runner() override { stop_all(); }

  // A job that will start: its dependency scan joins the next batch.
  bool looks_ahead() const override { return !stopping_ && !down(); }
  void ahead(const JobView& view) override {
    if (!view.job.depfile || view.temps.empty() || !kept_local(view.job, setup_.plan->cwd).empty()) return;
    if (auto scan = ActionBuilder::scan_command(view.command, view.temps)) scans_.prefetch(*scan);
  }

  // Jobs in flight are stopped (their calls cancelled); with none (the
  // runner's end after a build), the shared link stays usable: the cache's
  // engine layer still sends the launcher compile's whole entry through it.
  void stop_all() override {
    stopping_ = true;
    {
      std::lock_guard lock(m_);
      for (pid_t pid : pids_) kill(pid, SIGTERM);
    }
    if (any_thread()) setup_.link->cancel();
    local_.wake_all();
    join_all();
  }

  std::optional<RemoteJobNote> note(plan::JobId job) const override {
    std::lock_guard lock(m_);
    auto it = notes_.find(job);
    if (it == notes_.end()) return std::nullopt;
    return it->second;
  }

  size_t remote_jobs() const override { return setup_.config.jobs; }

  Counts counts() const override {
    const auto scans = scans_.counts();
    std::lock_guard lock(m_);
    Counts c = counts_;
    c.scans_batched = scans.batched;
    c.scan_runs = scans.runs;
    return c;
  }

 private:
  struct Work {
    plan::Job job;
    process::Command command;
    std::vector<fs::path> temps;
    JobKeys* keys = nullptr;  // the job cache's (JobView::keys)
    std::optional<std::vector<std::string>> absent;  // the scan's lookups that found nothing (where recorded)
    bool no_scan = false;                  // its dependency manifest held
  };

  std::function<Completion()> work(const JobView& view) override {
    auto work = std::make_shared<Work>(Work{view.job, view.command, view.temps, view.keys, std::nullopt, false});
    return [this, work] { return run(*work); };
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
    if (!local_why.empty() && local_why == w.job.runs_here && !planner_said_.exchange(true) && setup_.warn)
      setup_.warn(fmt::format("remote_execution {}: {} (docs/DISTRIBUTED.md)", setup_.config.display, local_why));
    if (sends && !down() && !stopping_) {
      if (auto refused = open()) {
        record(w.job.id, {RanWhere::Local, 0, 0, "remote execution is refused: " + *refused});
        return Completion{w.job.id, 2, {}, 0, false, *refused};
      }
    }
    if (sends && !down() && !stopping_) {
      std::string why;
      bool sent = false;
      auto done = run_remote(w, why, sent);
      // The remote result's record of lookups: the scan's, where the job
      // cache reads the depfile's temporary's.
      if (done && done->exit_code == 0 && w.absent)
        (void)util::write_file_atomic(toolchain::lookups_record(w.temps.back()),
                                      toolchain::lookups_record_text(*w.absent));
      if (done) return *done;
      // Kept here by what building its action found: nothing was sent.
      record(w.job.id, {sent ? RanWhere::Fallback : RanWhere::Local, 0, 0, why});
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
    process::OutputCapture out;
    auto pid = process::spawn(cmd, process::Stdio{-1, out.fd(), out.fd()});
    if (!pid) {
      local_.release();
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
    c.output = out.take();
    return c;
  }

  // Try the job on the engine: its completion, or nullopt and why it runs
  // locally instead; `sent` once its action was built (else nothing was sent).
  std::optional<Completion> run_remote(Work& w, std::string& why, bool& sent) {
    const std::string key = manifest_key(w);
    std::string failure;
    const auto known = key.empty() ? std::nullopt : served_manifest(w, key, failure);
    if (!failure.empty()) {  // the engine failed (said once): nothing is sent
      why = "the engine failed: " + printable(failure);
      return std::nullopt;
    }
    auto built = builder_.build(
        w.job, w.command, w.temps,
        [this](const process::Command& scan, const fs::path& depfile) { return scans_.run(scan, depfile); }, w.keys,
        w.absent, why, known ? &*known : nullptr);
    if (!built) return std::nullopt;
    sent = true;
    // The engine layer found nothing of the job: its action cache is not asked first.
    built->action.not_cached = ran_nowhere(w);
    // The manifest to store once it ran goes up with its inputs.
    const auto manifest = key.empty() || known ? std::nullopt : manifest_of(w, *built, key);
    if (manifest) built->action.values_after.push_back({kManifestKind, key, *manifest});
    reapi::ActionResult result;
    std::string error;
    const bool ran = client_->run(built->action, result, error);
    if (built->marker) {
      std::error_code ec;
      fs::remove(*built->marker, ec);
    }
    if (!ran) {
      if (stopping_) {
        why = "interrupted";
        return std::nullopt;
      }
      setup_.link->failed(error);
      why = "the engine failed: " + printable(error);
      return std::nullopt;
    }
    if (result.exit_code != 0) {
      // Rerun here: the error is printed as a local one, and a file the scan
      // missed (a computed include) can never make a wrong object.
      why = fmt::format("the remote compile exited with {}", result.exit_code);
      return std::nullopt;
    }
    auto done = unpack(w, built->outputs, result, why);
    if (done && manifest) store_manifest(key, *manifest);
    return done;
  }

  // Dependency manifests (dependency_manifest.cpp): only where the engine's
  // action cache is asked at all, only for compiles that are scanned, and
  // only with a signing key. A manifest decides which files a job's action
  // (and so its outputs, and the depfile its cache entry records) holds:
  // any client of the engine could plant one that leaves a header out, so
  // one is used only when signed with the team's key (docs/DISTRIBUTED.md).
  // Named by the job's direct key (cache/job_key.hpp): what decides its
  // outputs before any file is read.
  std::string manifest_key(const Work& w) const {
    const auto use = setup_.config.engine_cache;
    if (setup_.engine_layer || !w.keys || !w.job.depfile || setup_.signing_key.empty() ||
        (use != EngineCache::Use && use != EngineCache::Trusted))
      return {};
    const auto direct = w.keys->direct(w.job);
    return direct ? storage::sha256_hex("dependency manifest\n" + *direct) : std::string();
  }

  // With the engine layer: the entry the job cache asked the layer for first
  // found nothing in this build, so nothing says the job ran there.
  bool ran_nowhere(const Work& w) const {
    if (!setup_.engine_layer || !w.keys) return false;
    const auto entry = w.keys->first_entry(w.job);
    return entry && setup_.link->absent(storage::redis_key(entry->first, entry->second));
  }

  // The job's manifest from the engine, when it holds here: the job then
  // needs no scan, and its record of lookups is the manifest's.
  // `failure`: why the engine failed, said once (a manifest over its cap, refused unread).
  std::optional<ActionBuilder::Manifest> served_manifest(Work& w, const std::string& key, std::string& failure) {
    std::string text, error, why;
    if (!client_->get_value(kManifestKind, key, reapi::kMaxManifestBytes, text, error)) {
      setup_.link->failed(error);
      failure = error.empty() ? "GetActionResult failed" : error;
      return std::nullopt;
    }
    if (text.empty()) return std::nullopt;
    // Bound to its name and signed with our key, or it is none (planted, or another key's).
    auto signed_text = storage::decode_entry(text, kManifestKind, key, setup_.signing_key, reapi::kMaxManifestBytes);
    if (!signed_text) return std::nullopt;
    auto m = builder_.manifest_match(signed_text->metadata, w.command, why);
    if (!m) return std::nullopt;
    auto env = w.command.env;
    if (toolchain::redirect_lookups(env, w.temps.back())) w.absent = m->absent;
    w.no_scan = true;
    std::lock_guard lock(m_);
    ++counts_.scans_skipped;
    return m;
  }

  // What the scan found, as the job's manifest: none when the engine keeps no
  // values or the lookups are unknown (a manifest could not vouch for absences).
  std::optional<std::string> manifest_of(const Work& w, const ActionBuilder::Built& built, const std::string& key) {
    if (manifests_refused_ || !client_->stores_values()) return std::nullopt;
    auto text = builder_.manifest_text(built, w.absent ? *w.absent : std::vector<std::string>{});
    if (!text) return std::nullopt;
    return storage::encode_entry(storage::Entry{std::move(*text), {}}, kManifestKind, key,
                                 setup_.signing_key);
  }

  // After a scanned job ran on the engine: what the scan found, for the next
  // checkout. A refusal (update_enabled false) is asked once per build.
  void store_manifest(const std::string& key, const std::string& manifest) {
    if (manifests_refused_) return;
    std::string error;
    if (!client_->put_value(kManifestKind, key, manifest, error)) {
      manifests_refused_ = true;
      return;
    }
    std::lock_guard lock(m_);
    ++counts_.manifests_stored;
  }

  // The result's outputs into the executor's temporaries, and what the compiler printed.
  std::optional<Completion> unpack(const Work& w, const std::vector<std::string>& in_order,
                                   const reapi::ActionResult& result, std::string& why) {
    std::map<std::string, const reapi::OutputFile*> by_path;
    for (const auto& o : result.outputs) by_path[o.path] = &o;
    for (size_t i = 0; i < w.temps.size(); ++i) {
      auto it = by_path.find(in_order[i]);
      if (it == by_path.end()) {
        setup_.link->failed("the result lacks " + in_order[i]);
        why = "the result lacks an output";
        return std::nullopt;
      }
      auto written = util::write_file_atomic(w.temps[i], it->second->content);
      if (!written) {
        why = written.error().message;
        return std::nullopt;
      }
    }
    record(w.job.id,
           {result.cached ? RanWhere::EngineCache : RanWhere::Remote, result.queued_s, result.executed_s, {}, w.no_scan},
           result.uploaded_bytes);
    // What the compiler printed there: stored and replayed on every later
    // hit, so never a terminal escape, a line posing as ours, or gigabytes.
    std::string printed = util::foreign_text(result.stdout_text + result.stderr_text, "remote");
    if (result.text_dropped)
      printed += fmt::format("offload-build: note: {} more bytes of this remote compile's output were dropped "
                             "(the most kept is {} bytes of stdout and of stderr)\n",
                             result.text_dropped, setup_.config.endpoint.max_text_bytes);
    return Completion{w.job.id, 0, std::move(printed)};
  }

  // Whether jobs go to the engine no more (it failed, its compilers differ).
  bool down() const { return engine_down_ || setup_.link->down(); }

  // The engine, opened on the first job that goes to it (a launcher compile
  // whose jobs all hit never loads the module; the cache's engine layer or
  // make_remote_runner may have opened it already), its worker's compilers
  // checked (a build whose jobs all hit checks none): nullopt, or why
  // remote execution is refused (the job fails with it). An engine that
  // cannot be reached: one warning, every job runs locally.
  std::optional<std::string> open() {
    std::lock_guard once(open_once_m_);
    if (opened_) return refused_;
    opened_ = true;
    auto client = setup_.link->client();
    if (!client) {
      refused_ = client.error().message;
      engine_down_ = true;
    } else if (!*client) {
      engine_down_ = true;
      if (setup_.link->down_earlier()) down_earlier_ = "the engine failed earlier in this build (warned then)";
    } else if (!compilers_match(**client, setup_)) {
      engine_down_ = true;
      if (setup_.engine_down) setup_.engine_down(true);
    } else {
      client_ = *client;
    }
    return refused_;
  }

  RemoteRunnerSetup setup_;
  std::mutex open_once_m_;         // held while the engine is opened
  reapi::Client* client_ = nullptr;  // setup_.link's, once open() found it usable
  bool opened_ = false;
  std::optional<std::string> refused_;
  Slots local_;
  ActionBuilder builder_;  // after setup_
  ScanBatcher scans_;      // after local_
  std::atomic<bool> stopping_{false};
  std::atomic<bool> engine_down_{false};  // unusable for jobs: see down()
  std::string down_earlier_;  // set by open() before any job asks: why jobs that would go stay here
  std::atomic<bool> planner_said_{false};  // Job::runs_here, said once
  std::atomic<bool> manifests_refused_{false};  // the engine would not store one: not asked again
  mutable std::mutex m_;
  std::set<pid_t> pids_;
  std::map<plan::JobId, RemoteJobNote> notes_;
  Counts counts_;
};

// Toolchain files (resource headers, device runtimes) are the worker's: its
// compiler must be ours, at the same path. Asked once per compiler binary
// (and, with setup.check_once, once per make run: a launcher's compiles share
// it): paths that are one file here and print the same --version (clang-22,
// clang++-22 and the cc1 of -###, /usr/lib/llvm-22/bin/clang) are asked once,
// by the first: clang's --version names the directory it runs from with
// symlinks resolved (InstalledDir), so the worker's answer says its path
// leads to that installation. false when a worker's compiler differs or the
// engine failed (warned).
bool compilers_match(reapi::Client& client, const RemoteRunnerSetup& setup) {
  const std::string& shown = setup.config.display;
  std::set<std::string> compilers;
  for (const auto& job : setup.plan->jobs)
    if (kept_local(job, setup.plan->cwd).empty()) compilers.insert(compiler_path(job, setup.plan->cwd)->string());
  std::set<std::pair<std::string, std::string>> asked;  // (the binary, its --version)
  for (const auto& compiler : compilers) {
    auto local = process::capture(process::Command{{compiler, "--version"}, {}, {}}, 30000);
    if (!local || local->exit_code != 0) continue;  // a local problem: the build says it
    std::error_code ec;
    const fs::path binary = fs::canonical(compiler, ec);
    if (!asked.emplace(ec ? compiler : binary.string(), local->out).second) continue;
    auto check = [&] {
      reapi::Action action;
      action.argv = {compiler, "--version"};
      action.env = {{"PATH", "/usr/bin:/bin"}};
      action.do_not_cache = true;  // a worker's compiler may change: never an old answer
      action.mnemonic = "compiler-check";
      action.target_id = compiler;
      reapi::ActionResult r;
      std::string error;
      if (!client.run(action, r, error)) {
        setup.link->failed(error);
        return false;
      }
      if (r.exit_code == 0 && r.stdout_text == local->out) return true;
      // A worker whose compiler is another (one of a pool, upgraded in place)
      // costs a warning and a local build, as every other engine fault does.
      if (setup.warn)
        setup.warn(fmt::format(
            "remote_execution {}: the worker's {} is not ours (ours: \"{}\"; the worker's: \"{}\"); remote "
            "execution needs the same compiler at the same path on every worker (docs/DISTRIBUTED.md); "
            "the build runs locally",
            shown, compiler, printable(first_line(local->out)),
            printable(r.exit_code != 0 ? fmt::format("exit {}: {}", r.exit_code, first_line(r.stderr_text))
                                       : first_line(r.stdout_text))));
      return false;
    };
    const std::string memo = storage::sha256_hex(shown + '\n' + compiler + '\n' + local->out);
    if (!(setup.check_once ? setup.check_once(memo, check) : check())) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<RemoteRunner>> make_remote_runner(RemoteRunnerSetup setup) {
  if (!setup.link) setup.link = std::make_shared<EngineLink>(EngineLink::Setup{setup.config, setup.warn, setup.engine_down});
  if (!setup.lazy) {
    auto client = setup.link->client();
    if (!client) return client.error();
    if (!*client) return std::unique_ptr<RemoteRunner>();
  }
  return std::unique_ptr<RemoteRunner>(new Runner(std::move(setup)));
}

}  // namespace ob::exec
