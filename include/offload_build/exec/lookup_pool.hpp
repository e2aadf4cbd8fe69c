// The executor's cache lookups (ExecOptions::serve) on a small pool of
// threads, off the scheduler thread: a remote's latency is paid by several
// lookups at once. The scheduler submits at most `limit` at a time and takes
// the results back on its own thread, where everything else happens.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "offload_build/plan/plan.hpp"

namespace ob::exec {

enum class Served;

class LookupPool {
 public:
  using Lookup = std::function<Served()>;
  // `limit`: threads at most (started as needed). `on_result`: called on the
  // lookup's thread after its result is queued (the runner's wake()).
  LookupPool(size_t limit, std::function<void()> on_result);
  ~LookupPool();  // waits for the lookups running, drops those not started
  LookupPool(const LookupPool&) = delete;
  LookupPool& operator=(const LookupPool&) = delete;

  size_t limit() const { return limit_; }
  void submit(plan::JobId job, Lookup lookup);
  // Submitted and not yet taken back by take().
  size_t in_flight() const;
  // The results ready now, in the order they finished.
  std::vector<std::pair<plan::JobId, Served>> take();
  // Block until a result is ready, nothing is in flight, or `max_ms` passed.
  void wait(int max_ms);
  // Block until every submitted lookup has finished (its result waits for take()).
  void drain();

 private:
  void work();

  const size_t limit_;
  std::function<void()> on_result_;
  mutable std::mutex mu_;
  std::condition_variable work_;  // lookups: a task or stopping
  std::condition_variable done_;  // the scheduler: a result
  std::deque<std::pair<plan::JobId, Lookup>> queue_;
  std::vector<std::pair<plan::JobId, Served>> results_;
  size_t in_flight_ = 0;  // submitted, result not taken
  size_t running_ = 0;    // being looked up now
  size_t idle_ = 0;       // threads waiting for a task
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ob::exec
