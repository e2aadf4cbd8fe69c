#include "offload_build/exec/executor.hpp"

#include <unistd.h>

#include <deque>
#include <optional>
#include <system_error>

#include <fmt/core.h>

#include "offload_build/exec/interrupt.hpp"
#include "offload_build/util/strings.hpp"

namespace ob {

fs::path temporary_path(const fs::path& final_path, JobId job) {
  return final_path.parent_path() /
         fmt::format(".{}.ob-tmp-{}-{}", final_path.filename().string(), getpid(), job);
}

namespace {

// Every file a job writes: its outputs, then its depfile.
std::vector<fs::path> written_files(const Job& job) {
  std::vector<fs::path> files = job.outputs;
  if (job.depfile) files.push_back(*job.depfile);
  return files;
}

}  // namespace

Command job_command(const Plan& plan, const Job& job, const std::vector<fs::path>& temps) {
  Command cmd{job.argv, plan.cwd, {}};
  const auto files = written_files(job);
  for (size_t i = 0; i < files.size() && i < temps.size(); ++i) {
    const std::string final_arg = arg_path(files[i], plan.cwd).string();
    const std::string temp_arg = arg_path(temps[i], plan.cwd).string();
    for (auto& a : cmd.argv) {
      if (a == final_arg) a = temp_arg;
      // Joined forms such as -Wl,--dependency-file=PATH.
      else if (util::ends_with(a, "=" + final_arg))
        a = a.substr(0, a.size() - final_arg.size()) + temp_arg;
    }
  }
  return cmd;
}

namespace {

class Execution {
 public:
  Execution(const Plan& plan, CommandRunner& runner, const ExecOptions& opts)
      : plan_(plan), runner_(runner), opts_(opts), waiting_on_(plan.jobs.size(), 0),
        dependents_(plan.jobs.size()), temps_(plan.jobs.size()) {
    for (const auto& job : plan.jobs) {
      waiting_on_[job.id] = job.deps.size();
      for (JobId d : job.deps) dependents_[d].push_back(job.id);
      if (job.deps.empty()) ready_.push_back(job.id);
    }
  }

  Result<ExecSummary> run() {
    for (const auto& dir : plan_.directories) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return Error::failure(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    }
    while (done_ < plan_.jobs.size()) {
      if (exec::interrupted()) return abort_interrupted();
      while (!failure_ && runner_.running() < opts_.parallelism && !ready_.empty()) {
        JobId id = ready_.front();
        ready_.pop_front();
        start(plan_.jobs[id]);
      }
      if (runner_.running() == 0) break;
      auto completion = runner_.wait_any();
      if (!completion) continue;
      finish(plan_.jobs[completion->job], completion->exit_code);
    }
    if (exec::interrupted()) return abort_interrupted();
    if (failure_) return *failure_;
    return ExecSummary{plan_.jobs.size(), started_, served_};
  }

 private:
  void start(const Job& job) {
    auto& temps = temps_[job.id];
    for (const auto& out : written_files(job)) temps.push_back(temporary_path(out, job.id));
    ++counted_;
    if (opts_.serve && opts_.serve(job, temps)) {
      ++served_;
      progress(job, " (cached)");
      commit(job);
      return;
    }
    ++started_;
    progress(job, "");
    auto ok = runner_.start(job.id, job_command(plan_, job, temps));
    if (!ok) {
      remove_temps(job.id);
      failure_ = ok.error();
    }
  }

  void finish(const Job& job, int exit_code) {
    if (exit_code != 0) {
      remove_temps(job.id);
      fail(Error::failure(fmt::format("{} failed with exit code {}\n  command: {}",
                                      job.describe(plan_.cwd), exit_code,
                                      util::shell_join(job.argv))));
      return;
    }
    for (size_t i = 0; i < job.outputs.size(); ++i) {
      const fs::path& t = temps_[job.id][i];
      if (!fs::exists(t)) {
        remove_temps(job.id);
        fail(Error::failure(fmt::format("{} succeeded but did not write {}",
                                        job.describe(plan_.cwd), t.string())));
        return;
      }
    }
    const std::vector<fs::path> outputs(temps_[job.id].begin(),
                                        temps_[job.id].begin() + job.outputs.size());
    if (opts_.check_outputs) {
      if (auto checked = opts_.check_outputs(job, outputs); !checked) {
        remove_temps(job.id);
        fail(checked.error());
        return;
      }
    }
    if (opts_.after_run) {
      std::optional<fs::path> depfile;
      if (job.depfile && fs::exists(temps_[job.id].back())) depfile = temps_[job.id].back();
      opts_.after_run(job, outputs, depfile);
    }
    commit(job);
  }

  // Rename every temporary into place, then release the job's dependents.
  void commit(const Job& job) {
    const auto files = written_files(job);
    for (size_t i = 0; i < files.size(); ++i) {
      std::error_code ec;
      const bool is_depfile = job.depfile && i == files.size() - 1;
      if (is_depfile && !fs::exists(temps_[job.id][i])) continue;  // served jobs have none
      // Only ever replace regular files: an output named /dev/null must not
      // turn the device into a file.
      auto st = fs::symlink_status(files[i], ec);
      if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
        remove_temps(job.id);
        fail(Error::failure(fmt::format("{}: refusing to replace {}, which is not a regular file",
                                        job.describe(plan_.cwd), files[i].string())));
        return;
      }
      fs::rename(temps_[job.id][i], files[i], ec);
      if (ec) {
        remove_temps(job.id);
        fail(Error::failure(fmt::format("cannot write {}: {}", files[i].string(), ec.message())));
        return;
      }
    }
    temps_[job.id].clear();
    ++done_;
    for (JobId next : dependents_[job.id])
      if (--waiting_on_[next] == 0) ready_.push_back(next);
  }

  void progress(const Job& job, std::string_view note) {
    if (!opts_.progress) return;
    *opts_.progress << fmt::format("[{}/{}] {}{}\n", counted_, plan_.jobs.size(),
                                   job.describe(plan_.cwd), note)
                    << std::flush;
  }

  void fail(Error e) {
    if (!failure_) failure_ = std::move(e);
  }

  void remove_temps(JobId id) {
    for (const auto& t : temps_[id]) {
      std::error_code ec;
      fs::remove(t, ec);
    }
    temps_[id].clear();
  }

  Result<ExecSummary> abort_interrupted() {
    runner_.stop_all();
    for (const auto& job : plan_.jobs) remove_temps(job.id);
    return Error{"interrupted: stopped the running jobs and removed their partial outputs",
                 exit_code::interrupted};
  }

  const Plan& plan_;
  CommandRunner& runner_;
  const ExecOptions& opts_;
  std::vector<size_t> waiting_on_;
  std::vector<std::vector<JobId>> dependents_;
  std::vector<std::vector<fs::path>> temps_;
  std::deque<JobId> ready_;
  size_t counted_ = 0;  // jobs started or served
  size_t started_ = 0;
  size_t served_ = 0;
  size_t done_ = 0;
  std::optional<Error> failure_;
};

}  // namespace

Result<ExecSummary> execute(const Plan& plan, CommandRunner& runner, const ExecOptions& options) {
  return Execution(plan, runner, options).run();
}

std::string dry_run_script(const Plan& plan) {
  std::string out = "cd " + util::shell_quote(plan.cwd.string()) + "\n";
  std::vector<std::string> mkdir{"mkdir", "-p"};
  for (const auto& d : plan.directories) mkdir.push_back(arg_path(d, plan.cwd).string());
  out += util::shell_join(mkdir) + "\n";
  for (const auto& job : plan.jobs) out += util::shell_join(job.argv) + "\n";
  return out;
}

}  // namespace ob
