// Dependency scans in batches (docs/DISTRIBUTED.md): the scans of every job
// known to be about to run (prefetch: its cache lookup missed) and of those
// asked for while a batch runs go together, as one clang-scan-deps over all
// of them (toolchain/frontends/scan_deps.hpp), not one clang -M each. Each
// scan gets, in memory, the depfile its own clang -M would have written, and
// the lookups that found nothing: the batch's, every lookup that found nothing in any
// of its compiles (more absent paths than its own, never fewer: a header
// created at any of them only makes the job miss). A scan the batch cannot
// answer (a cc1 command, no clang-scan-deps beside the compiler, a failure)
// runs alone, as before. So does one whose files (outside the system
// directories) test for a file or embed one (__has_include, __has_embed,
// #embed): clang-scan-deps lists neither a file found by such a test nor a
// second name through a symlinked directory, clang -M lists both.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/process/command.hpp"

namespace ob::exec {

namespace fs = std::filesystem;

// What a dependency scan found.
struct ScanFound {
  std::string depfile;  // the depfile's text
  // Each lookup that found nothing, where the scan's environment records
  // lookups (toolchain::redirect_lookups); nullopt where it does not.
  std::optional<std::vector<std::string>> absent;
};

class ScanBatcher {
 public:
  // `run`: a command in a local slot, true when it exited 0.
  using RunFn = std::function<bool(const process::Command&)>;
  // `system_dirs`: files under these are the worker's own toolchain (their tests are its own).
  ScanBatcher(size_t threads, RunFn run, std::vector<fs::path> system_dirs = {})
      : threads_(threads), run_(std::move(run)), system_dirs_(std::move(system_dirs)) {}

  // Run `scan` (a frontend::dependency_scan command naming `depfile`): what it
  // found, nullopt when it failed; no file is left behind. Any thread; it
  // may wait for a batch another thread runs.
  std::optional<ScanFound> run(const process::Command& scan, const fs::path& depfile);
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
  // `scan` alone, as its own clang -M: what it wrote, read back and removed.
  std::optional<ScanFound> run_alone(const process::Command& scan, const fs::path& depfile) const;

  // Whether any of `files` tests for or embeds a file (memoized by path, size and mtime).
  bool tests_for_files(const std::vector<std::string>& files, const fs::path& cwd);

  size_t threads_;
  RunFn run_;
  std::vector<fs::path> system_dirs_;
  std::map<std::string, bool> tests_;  // (m_) by path, size and mtime
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Request>> pending_;
  std::map<std::string, std::shared_ptr<Request>> prefetched_;  // by depfile, until run() asks
  bool busy_ = false;
  Counts counts_;
};

}  // namespace ob::exec
