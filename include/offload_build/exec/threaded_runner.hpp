// A CommandRunner whose jobs each run on a thread of their own (the cargo
// runner's steps, remote execution's actions): start() hands the job's work
// to a new thread, wait_any() returns completions in the order they end and
// gives up on Ctrl-C or wake() (an eventfd each, polled with the interrupt
// pipe), join_all() waits for every thread. A runner says only what one
// job's work is (work()) and how its work is stopped (stop_all(), which then
// calls join_all()). Its destructor must call stop_all(): the threads use
// its members.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "offload_build/exec/command_runner.hpp"

namespace ob::exec {

class ThreadedRunner : public CommandRunner {
 public:
  ~ThreadedRunner() override;
  ThreadedRunner(const ThreadedRunner&) = delete;
  ThreadedRunner& operator=(const ThreadedRunner&) = delete;

  Result<void> start(const JobView& view) final;
  std::optional<Completion> wait_any() final;
  void wake() final;
  size_t running() const final;

 protected:
  ThreadedRunner();
  // What the job's thread runs, made from `view` now (it is valid only
  // during start(): the work copies what it keeps).
  virtual std::function<Completion()> work(const JobView& view) = 0;
  // Whether any job's thread is alive (its work in progress or just ended).
  bool any_thread() const;
  // Wait for every job's thread (their work told to stop first) and forget
  // what they completed.
  void join_all();

 private:
  mutable std::mutex mu_;  // everything below
  std::deque<Completion> done_;
  std::map<plan::JobId, std::thread> threads_;
  size_t running_ = 0;  // started and not yet returned by wait_any
  int done_fd_ = -1;    // eventfd: a job's thread ended
  int wake_fd_ = -1;    // eventfd: wake()
};

}  // namespace ob::exec
