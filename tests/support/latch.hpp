// Lookups that prove they overlap: each waits until `want` of them are in
// flight at once, or gives up after a generous timeout (so a build that runs
// them one at a time fails the test instead of hanging). Not a timing
// assertion: reaching `want` needs `want` calls to be inside at the same time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ob::test {

class OverlapLatch {
 public:
  explicit OverlapLatch(size_t want, std::chrono::seconds timeout = std::chrono::seconds(20))
      : want_(want), timeout_(timeout) {}

  // Inside one lookup: count it in, wait for the others, count it out.
  void arrive_and_wait() {
    std::unique_lock lock(mu_);
    ++inside_;
    peak_ = std::max(peak_, inside_);
    if (!other_thread_ && std::this_thread::get_id() != main_) other_thread_ = true;
    cv_.notify_all();
    if (!cv_.wait_for(lock, timeout_, [&] { return peak_ >= want_ || gave_up_; })) gave_up_ = true;
    cv_.notify_all();
    --inside_;
  }

  size_t peak() const {
    std::lock_guard lock(mu_);
    return peak_;
  }
  bool gave_up() const {
    std::lock_guard lock(mu_);
    return gave_up_;
  }
  // Whether any lookup ran off the thread that made the latch (the scheduler's).
  bool off_main_thread() const {
    std::lock_guard lock(mu_);
    return other_thread_;
  }

 private:
  const size_t want_;
  const std::chrono::seconds timeout_;
  const std::thread::id main_ = std::this_thread::get_id();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t inside_ = 0;
  size_t peak_ = 0;
  bool gave_up_ = false;
  bool other_thread_ = false;
};

}  // namespace ob::test
