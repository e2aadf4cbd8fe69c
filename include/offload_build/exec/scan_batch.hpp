// Dependency scans in batches (docs/DISTRIBUTED.md): the scans of every job
// known to be about to run (prefetch: its cache lookup missed) and of those
// asked for while a batch runs go together, as one clang-scan-deps over all
// of them (toolchain/frontends/clang_scan.hpp), not one clang -M each. Each scan gets the depfile its own clang -M would have written, and
// the record of lookups: the batch's, every lookup that found nothing in any
// of its compiles (more absent paths than its own, never fewer: a header
// created at any of them only makes the job miss). A scan the batch cannot
// answer (a cc1 command, no clang-scan-deps beside the compiler, a failure)
// runs alone, as before.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "offload_build/process/command.hpp"

namespace ob::exec {

class ScanBatcher {
 public:
  // `run`: a command in a local slot, true when it exited 0.
  using RunFn = std::function<bool(const process::Command&)>;
  ScanBatcher(size_t threads, RunFn run) : threads_(threads), run_(std::move(run)) {}

  // Run `scan` (a dependency_scan_argv command): true when its depfile (and,
  // when its environment asks, its record of lookups) was written. Any
  // thread; it may wait for a batch another thread runs.
  bool run(const process::Command& scan);
  // `scan` will be asked for (its job runs soon): scanned with the next
  // batch, its answer kept until run() asks. Any thread.
  void prefetch(const process::Command& scan);

  struct Counts {
    size_t batched = 0;  // scans answered by a batch
    size_t runs = 0;     // clang-scan-deps runs
  };
  Counts counts() const {
    std::lock_guard lock(m_);
    return counts_;
  }

 private:
  struct Request;
  std::shared_ptr<Request> request(const process::Command& scan) const;
  void run_batch(std::vector<std::shared_ptr<Request>>& batch);

  size_t threads_;
  RunFn run_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Request>> pending_;
  std::map<std::string, std::shared_ptr<Request>> prefetched_;  // by depfile, until run() asks
  bool busy_ = false;
  Counts counts_;
};

}  // namespace ob::exec
