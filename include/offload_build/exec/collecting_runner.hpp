// A runner that keeps what each job printed (the inner runner buffers it)
// instead of letting the executor print it: a split launcher compile shows
// it after success, in the compiler's order (report::in_clang_order), and
// replaces it with the compiler's own diagnostics after a failure.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "offload_build/exec/command_runner.hpp"

namespace ob::exec {

class CollectingRunner final : public CommandRunner {
 public:
  // `inner`: nullptr for the process runner, buffering.
  explicit CollectingRunner(std::unique_ptr<CommandRunner> inner)
      : inner_(inner ? std::move(inner) : make_process_runner(true)) {}
  Result<void> start(const JobView& job) override { return inner_->start(job); }
  std::optional<Completion> wait_any() override {
    auto c = inner_->wait_any();
    if (c) {
      output[c->job] = c->output;  // the executor also gets it, for the cache
      exit_codes[c->job] = c->exit_code;
    }
    return c;
  }
  void wake() override { inner_->wake(); }
  void stop_all() override { inner_->stop_all(); }
  size_t running() const override { return inner_->running(); }
  RemoteRunner* remote() override { return inner_->remote(); }
  // What each job printed (a cache hit's replayed output is put here too).
  std::map<plan::JobId, std::string> output;
  // How each job that ran ended (its command's exit code).
  std::map<plan::JobId, int> exit_codes;

 private:
  std::unique_ptr<CommandRunner> inner_;
};

}  // namespace ob::exec
