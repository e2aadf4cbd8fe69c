#include "offload_build/exec/executor.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <system_error>

#include <fmt/core.h>

#include "offload_build/exec/lookup_pool.hpp"
#include "offload_build/process/interrupt.hpp"
#include "offload_build/report/progress.hpp"
#include "offload_build/util/strings.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::exec {

fs::path temporary_path(const fs::path& final_path, plan::JobId job) {
  return final_path.parent_path() /
         fmt::format(".{}.ob-tmp-{}-{}", final_path.filename().string(), getpid(), job);
}

namespace {

// Every file a job writes: its outputs, then its depfile.
std::vector<fs::path> written_files(const plan::Job& job) {
  std::vector<fs::path> files = job.outputs;
  if (job.depfile) files.push_back(*job.depfile);
  return files;
}

// The process that made a temporary named ".X.ob-tmp-PID-JOB[...]" (with the
// compiler's own suffix, as clang's "-abc123.tmp"), 0 when it is no such name.
pid_t temp_owner(const std::string& name) {
  const size_t at = name.find(".ob-tmp-");
  if (name.empty() || name.front() != '.' || at == std::string::npos) return 0;
  size_t i = at + 8;
  long pid = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && pid < (1L << 31); ++i)
    pid = pid * 10 + (name[i] - '0');
  if (i == at + 8 || i >= name.size() || name[i] != '-') return 0;
  return static_cast<pid_t>(pid);
}

// Remove the temporaries in the output directories of `plan` whose process
// matches `gone` (a dead one's at the start of a build; ours after an interrupt).
template <class Gone>
void sweep_temps(const plan::Plan& plan, const Gone& gone) {
  std::set<fs::path> dirs;
  for (const auto& job : plan.jobs)
    for (const auto& f : written_files(job)) dirs.insert(f.parent_path());
  for (const auto& dir : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const pid_t pid = temp_owner(it->path().filename().string());
      std::error_code ec2;
      if (pid > 0 && gone(pid) && fs::is_regular_file(it->symlink_status(ec2))) fs::remove(it->path(), ec2);
    }
  }
}

}  // namespace

process::Command job_command(const plan::Plan& plan, const plan::Job& job, const std::vector<fs::path>& temps) {
  process::Command cmd{job.argv, plan.cwd, job.env};
  const auto files = written_files(job);
  for (size_t i = 0; i < files.size() && i < temps.size(); ++i) {
    const std::string final_arg = plan::arg_path(files[i], plan.cwd).string();
    const std::string temp_arg = plan::arg_path(temps[i], plan.cwd).string();
    for (auto& a : cmd.argv) {
      if (a == final_arg) a = temp_arg;
      // Joined forms such as -Wl,--dependency-file=PATH.
      else if (util::ends_with(a, "=" + final_arg))
        a = a.substr(0, a.size() - final_arg.size()) + temp_arg;
    }
    // The environment names it by absolute path (the depfile whose lookups are recorded).
    for (auto& [name, value] : cmd.env)
      if (value && *value == files[i].string()) *value = temps[i].string();
  }
  return cmd;
}

namespace {

class Execution {
 public:
  Execution(const plan::Plan& plan, CommandRunner& runner, const ExecOptions& opts)
      : plan_(plan), runner_(runner), opts_(opts), waiting_on_(plan.jobs.size(), 0),
        dependents_(plan.jobs.size()), temps_(plan.jobs.size()), began_(plan.jobs.size()) {
    for (const auto& job : plan.jobs) {
      waiting_on_[job.id] = job.deps.size();
      for (plan::JobId d : job.deps) dependents_[d].push_back(job.id);
      if (job.deps.empty()) ready_.push_back(job.id);
    }
    // Without a listener, `progress` gets the plain "[i/N] ..." lines.
    if (opts.observer) {
      observer_ = opts.observer;
    } else if (opts.progress) {
      own_observer_ = std::make_unique<report::ConsoleProgress>(
          *opts.progress, report::ConsoleOptions{report::ProgressMode::Plain, 0});
      observer_ = own_observer_.get();
    }
    // One lookup at a time is asked on this thread: a thread hand-off per job
    // costs more than a local lookup (a no-op build of 200 jobs: +50%).
    if (opts.serve && opts.lookups != 1) {
      const size_t limit = opts.lookups ? opts.lookups : std::max(opts.parallelism, kDefaultLookups);
      lookups_ = std::make_unique<LookupPool>(limit, [&runner] { runner.wake(); });
    }
  }

  Result<ExecSummary> run() {
    // Temporaries of builds killed before they could clean up (kill -9).
    sweep_temps(plan_, [](pid_t pid) {
      return pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
    });
    if (observer_) observer_->build_started(plan_);
    auto result = run_jobs();
    if (observer_) {
      observer_->build_finished(result ? report::BuildResult::Ok
                                : result.error().code == exit_code::interrupted ? report::BuildResult::Interrupted
                                                                                : report::BuildResult::Failed);
    }
    return result;
  }

 private:
  using Clock = std::chrono::steady_clock;

  double seconds_since(Clock::time_point t) const {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

  Result<ExecSummary> run_jobs() {
    for (const auto& dir : plan_.directories) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return Error::failure(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    }
    while (done_ < plan_.jobs.size()) {
      if (process::interrupted()) return abort_interrupted();
      take_lookups();
      // Ready jobs are looked up (on the lookup threads) or, without a cache, queued to run.
      while (!failure_ && !ready_.empty() && (!lookups_ || lookups_->in_flight() < lookups_->limit())) {
        const plan::JobId id = ready_.front();
        ready_.pop_front();
        look_up(plan_.jobs[id]);
      }
      while (!failure_ && runner_.running() < opts_.parallelism && !to_run_.empty()) {
        if (!take_slot()) break;  // wait for one of our own jobs instead
        const plan::JobId id = to_run_.front();
        to_run_.pop_front();
        launch(plan_.jobs[id]);
      }
      const bool looking = lookups_ && lookups_->in_flight() > 0;
      if (runner_.running() == 0) {
        if (!looking) break;
        lookups_->wait(100);  // a result, or time to look at the interrupt flag again
        continue;
      }
      auto completion = runner_.wait_any();  // a lookup's result wakes it
      if (!completion) continue;
      if (observer_ && completion->exit_code == 0)
        observer_->job_cpu(plan_.jobs[completion->job], completion->cpu_s);
      finish(plan_.jobs[completion->job], *completion);
      return_slots();
    }
    if (process::interrupted()) return abort_interrupted();
    if (failure_) return *failure_;
    // Commands that found their outputs current count as up to date, not as run.
    return ExecSummary{plan_.jobs.size(), started_ - found_current_, served_, up_to_date_ + found_current_};
  }

  // Give a ready job its temporaries, then ask `serve` about it on a lookup
  // thread; without `serve` it must run.
  void look_up(const plan::Job& job) {
    auto& temps = temps_[job.id];
    for (const auto& out : written_files(job)) {
      const bool in_place = std::find(job.written_in_place.begin(), job.written_in_place.end(), out) !=
                            job.written_in_place.end();
      temps.push_back(in_place ? out : temporary_path(out, job.id));
    }
    began_[job.id] = Clock::now();
    if (!lookups_) {
      if (opts_.serve) served_by_lookup(job, opts_.serve(job, temps));
      else to_run_.push_back(job.id);
      return;
    }
    lookups_->submit(job.id, [this, &job, temps = temps] { return opts_.serve(job, temps); });
  }

  // The lookups that finished, on this thread, in the order they finished.
  void take_lookups() {
    if (!lookups_) return;
    for (const auto& [id, served] : lookups_->take()) served_by_lookup(plan_.jobs[id], served);
  }

  void served_by_lookup(const plan::Job& job, Served served) {
    auto& temps = temps_[job.id];
    if (opts_.after_serve) opts_.after_serve(job, served);
    if (served == Served::FromCache) {
      ++served_;
      if (observer_) observer_->job_served(job, report::ServedFrom::Cache, seconds_since(began_[job.id]));
      commit(job);
      return;
    }
    if (served == Served::UpToDate) {
      ++up_to_date_;
      if (observer_) observer_->job_served(job, report::ServedFrom::UpToDate, seconds_since(began_[job.id]));
      temps.clear();
      release_dependents(job);
      return;
    }
    // After a failure nothing more starts (its temporaries were not written).
    if (failure_) {
      temps.clear();
      return;
    }
    to_run_.push_back(job.id);
    if (runner_.looks_ahead()) runner_.ahead(JobView{job, job_command(plan_, job, temps), temps, opts_.keys});
  }

  // Run a job's command (`serve` said it must run, and it has a slot).
  void launch(const plan::Job& job) {
    const auto& temps = temps_[job.id];
    ++started_;
    if (observer_) observer_->job_started(job);
    began_[job.id] = Clock::now();
    const process::Command command = job_command(plan_, job, temps);
    auto ok = runner_.start(JobView{job, command, temps, opts_.keys});
    if (!ok) {
      remove_temps(job.id);
      fail_job(job, -1, ok.error());
      return_slots();
    }
  }

  // A command may start while none of ours runs (on the slot this process was
  // started with), or with a slot from ExecOptions::try_acquire_slot.
  bool take_slot() {
    if (!opts_.try_acquire_slot || runner_.running() == 0) return true;
    if (!opts_.try_acquire_slot()) return false;
    ++slots_held_;
    return true;
  }

  // Hold one slot per running command beyond the first; give back the rest.
  void return_slots() {
    while (slots_held_ > 0 && slots_held_ >= runner_.running()) {
      --slots_held_;
      if (opts_.release_slot) opts_.release_slot();
    }
  }

  void finish(const plan::Job& job, const CommandRunner::Completion& done) {
    const int exit_code = done.exit_code;
    const std::string& output = done.output;
    if (!output.empty()) {
      if (observer_) observer_->job_output(job, output);
      else std::cerr << output << std::flush;
    }
    if (exit_code != 0) {
      remove_temps(job.id);
      fail_job(job, exit_code,
               Error::failure((!done.error.empty()
                                   ? done.error
                                   : fmt::format("{} failed with exit code {}\n  command: {}",
                                                 job.describe(plan_.cwd), exit_code,
                                                 util::shell_join(job.argv))) +
                              (job.failure_hint.empty() ? "" : "\n  note: " + job.failure_hint)));
      return;
    }
    for (size_t i = 0; i < job.outputs.size(); ++i) {
      const fs::path t = temps_[job.id][i];  // a copy: remove_temps clears temps_[job.id]
      // Written in place, found by a scan (a MODULE in an #if branch not
      // compiled writes none): the cache stores no entry without it.
      if (t == job.outputs[i]) continue;
      if (!fs::exists(t)) {
        remove_temps(job.id);
        fail_job(job, 0, Error::failure(fmt::format("{} succeeded but did not write {}",
                                                    job.describe(plan_.cwd), t.string())));
        return;
      }
    }
    if (wrote_no_depfile(job)) {
      remove_temps(job.id);
      fail_job(job, 0,
               Error::failure(fmt::format(
                   "{} exited 0 but wrote no dependency file: what it read is unknown, and its object may "
                   "lack it (clang writes none, and embeds nothing, when an #embed names a missing file; "
                   "without the -MD offload-build adds it fails there)",
                   job.describe(plan_.cwd))));
      return;
    }
    const std::vector<fs::path> outputs(temps_[job.id].begin(),
                                        temps_[job.id].begin() + job.outputs.size());
    if (opts_.check_outputs) {
      if (auto checked = opts_.check_outputs(job, outputs); !checked) {
        remove_temps(job.id);
        fail_job(job, 0, checked.error());
        return;
      }
    }
    if (opts_.after_run) {
      std::optional<fs::path> depfile;
      if (job.depfile && fs::exists(temps_[job.id].back())) depfile = temps_[job.id].back();
      opts_.after_run(job, outputs, depfile, output);
    }
    if (!commit(job)) return;
    if (done.up_to_date) ++found_current_;
    if (!observer_) return;
    if (done.up_to_date) observer_->job_found_current(job);
    observer_->job_finished(job, seconds_since(began_[job.id]));
  }

  // A C/C++ compile by clang that ran, exited 0 and left no depfile: clang 22
  // does so, with an object, when an #embed names a missing file under -MD.
  bool wrote_no_depfile(const plan::Job& job) const {
    if (!job.depfile || job.kind == plan::JobKind::Link || job.argv.empty()) return false;
    const std::string tool = fs::path(job.argv.front()).filename().string();
    if (tool.find("clang") == std::string::npos) return false;
    std::error_code ec;
    return !fs::exists(temps_.at(job.id).back(), ec);
  }

  // Rename every temporary into place, then release the job's dependents.
  bool commit(const plan::Job& job) {
    const auto files = written_files(job);
    for (size_t i = 0; i < files.size(); ++i) {
      std::error_code ec;
      const bool is_depfile = job.depfile && i == files.size() - 1;
      if (is_depfile && !fs::exists(temps_[job.id][i])) continue;  // served jobs have none
      if (temps_[job.id][i] == files[i]) continue;                   // written in place
      // Only ever replace regular files: an output named /dev/null must not
      // turn the device into a file.
      auto st = fs::symlink_status(files[i], ec);
      if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
        remove_temps(job.id);
        fail_job(job, 0,
                 Error::failure(fmt::format("{}: refusing to replace {}, which is not a regular file",
                                            job.describe(plan_.cwd), files[i].string())));
        return false;
      }
      fs::rename(temps_[job.id][i], files[i], ec);
      if (ec) {
        remove_temps(job.id);
        fail_job(job, 0, Error::failure(fmt::format("cannot write {}: {}", files[i].string(),
                                                    ec.message())));
        return false;
      }
    }
    temps_[job.id].clear();
    release_dependents(job);
    return true;
  }

  void release_dependents(const plan::Job& job) {
    ++done_;
    for (plan::JobId next : dependents_[job.id])
      if (--waiting_on_[next] == 0) ready_.push_back(next);
  }

  void fail(Error e) {
    if (!failure_) failure_ = std::move(e);
  }

  // A job failed: tell the listener, and remember the build's first failure.
  // `exit_code`: the command's (0 when its outputs failed a check, -1 when it never started).
  void fail_job(const plan::Job& job, int exit_code, Error e) {
    if (observer_) observer_->job_failed(job, exit_code, seconds_since(began_[job.id]), e.message);
    fail(std::move(e));
  }

  void remove_temps(plan::JobId id) {
    for (const auto& t : temps_[id]) {
      std::error_code ec;
      fs::remove(t, ec);
    }
    // The lookups the preload library recorded beside the depfile (Job::records_lookups).
    if (plan_.jobs[id].records_lookups && !temps_[id].empty()) {
      std::error_code ec;
      fs::remove(toolchain::lookups_record(temps_[id].back()), ec);
    }
    temps_[id].clear();
  }

  Result<ExecSummary> abort_interrupted() {
    runner_.stop_all();
    // Lookups cannot be stopped: wait for them (each is bounded by its
    // storage's deadlines), so that no temporary is written after the sweep.
    if (lookups_) {
      lookups_->drain();
      (void)lookups_->take();
    }
    return_slots();
    for (const auto& job : plan_.jobs) remove_temps(job.id);
    // The compilers' own temporaries next to ours (clang's "<output>-*.tmp").
    sweep_temps(plan_, [](pid_t pid) { return pid == ::getpid(); });
    return Error{"interrupted: stopped the running jobs and removed their partial outputs",
                 exit_code::interrupted};
  }

  const plan::Plan& plan_;
  CommandRunner& runner_;
  const ExecOptions& opts_;
  std::vector<size_t> waiting_on_;
  std::vector<std::vector<plan::JobId>> dependents_;
  std::vector<std::vector<fs::path>> temps_;
  std::deque<plan::JobId> ready_;
  std::deque<plan::JobId> to_run_;  // serve said No: waiting for -j or a jobserver slot
  std::unique_ptr<LookupPool> lookups_;  // when ExecOptions::serve is set
  size_t slots_held_ = 0;
  report::Progress* observer_ = nullptr;
  std::unique_ptr<report::Progress> own_observer_;  // plain lines to ExecOptions::progress
  std::vector<Clock::time_point> began_;    // per job: when it was served or started
  size_t started_ = 0;
  size_t served_ = 0;
  size_t up_to_date_ = 0;
  size_t found_current_ = 0;  // commands that said their outputs were current
  size_t done_ = 0;
  std::optional<Error> failure_;
};

}  // namespace

Result<ExecSummary> execute(const plan::Plan& plan, CommandRunner& runner, const ExecOptions& options) {
  return Execution(plan, runner, options).run();
}

std::vector<plan::JobId> up_to_date_order(const plan::Plan& plan) {
  // Execution's own walk when each lookup answers at once: ready jobs in
  // plan order, each one's dependents queued as it completes.
  std::vector<size_t> waiting_on(plan.jobs.size(), 0);
  std::vector<std::vector<plan::JobId>> dependents(plan.jobs.size());
  std::deque<plan::JobId> ready;
  for (const auto& job : plan.jobs) {
    waiting_on[job.id] = job.deps.size();
    for (plan::JobId d : job.deps) dependents[d].push_back(job.id);
    if (job.deps.empty()) ready.push_back(job.id);
  }
  std::vector<plan::JobId> order;
  while (!ready.empty()) {
    const plan::JobId id = ready.front();
    ready.pop_front();
    order.push_back(id);
    for (plan::JobId next : dependents[id])
      if (--waiting_on[next] == 0) ready.push_back(next);
  }
  return order;
}

std::string dry_run_script(const plan::Plan& plan) {
  std::string out = "cd " + util::shell_quote(plan.cwd.string()) + "\n";
  std::vector<std::string> mkdir{"mkdir", "-p"};
  for (const auto& d : plan.directories) mkdir.push_back(plan::arg_path(d, plan.cwd).string());
  out += util::shell_join(mkdir) + "\n";
  for (const auto& job : plan.jobs) {
    // Without the lookups record (it is the cache's, and a script stores nothing).
    auto env = job.env;
    std::erase_if(env, [](const auto& e) { return toolchain::is_lookups_variable(e.first); });
    out += process::Command{job.argv, {}, env}.display() + "\n";
  }
  return out;
}

}  // namespace ob::exec
