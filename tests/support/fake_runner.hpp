// A CommandRunner that runs nothing: it records each job and command it was
// given, "writes" the file named after -o, and completes jobs in start order
// (or fails chosen ones).
#pragma once

#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "offload_build/exec/command_runner.hpp"

namespace ob::test {

// Whether `dir` holds a temporary output (".NAME.ob-tmp-PID-JOB") the executor left.
inline bool has_temp_files(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".ob-tmp-") != std::string::npos) return true;
  return false;
}

class FakeRunner : public exec::CommandRunner {
 public:
  std::vector<plan::JobId> started;            // in start order
  std::vector<process::Command> commands;         // in start order
  std::vector<plan::Job> jobs;                 // the jobs as given (inputs, outputs, tools...)
  std::vector<std::vector<std::filesystem::path>> temps;  // where each was told to write
  std::map<plan::JobId, int> exit_codes;       // default 0
  std::set<plan::JobId> skip_output;           // succeed without writing the output
  std::set<plan::JobId> found_current;         // say the outputs were already current
  std::map<plan::JobId, std::string> errors;   // the failure's message, instead of the executor's
  size_t max_running_seen = 0;

  Result<void> start(const exec::JobView& view) override {
    const plan::JobId job = view.job.id;
    const process::Command& cmd = view.command;
    started.push_back(job);
    commands.push_back(cmd);
    jobs.push_back(view.job);
    temps.push_back(view.temps);
    running_.push_back(job);
    max_running_seen = std::max(max_running_seen, running_.size());
    if (!skip_output.count(job)) {
      for (size_t i = 0; i + 1 < cmd.argv.size(); ++i) {
        if (cmd.argv[i] != "-o") continue;
        std::filesystem::path out = cmd.argv[i + 1];
        if (out.is_relative()) out = cmd.cwd / out;
        std::ofstream(out) << "output of job " << job << "\n";
      }
    }
    return {};
  }

  std::optional<Completion> wait_any() override {
    if (running_.empty()) return std::nullopt;
    plan::JobId job = running_.front();
    running_.erase(running_.begin());
    auto it = exit_codes.find(job);
    Completion done{job, it == exit_codes.end() ? 0 : it->second};
    done.up_to_date = found_current.count(job) > 0;
    if (auto e = errors.find(job); e != errors.end()) done.error = e->second;
    return done;
  }

  void wake() override {}  // wait_any never blocks
  void stop_all() override { running_.clear(); }
  size_t running() const override { return running_.size(); }

 private:
  std::vector<plan::JobId> running_;
};

}  // namespace ob::test
