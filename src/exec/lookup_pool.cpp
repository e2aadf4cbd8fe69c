#include "offload_build/exec/lookup_pool.hpp"

#include <chrono>

#include "offload_build/exec/executor.hpp"

namespace ob::exec {

LookupPool::LookupPool(size_t limit, std::function<void()> on_result)
    : limit_(std::max<size_t>(1, limit)), on_result_(std::move(on_result)) {}

LookupPool::~LookupPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  work_.notify_all();
  for (auto& t : threads_) t.join();
}

void LookupPool::submit(plan::JobId job, Lookup lookup) {
  std::lock_guard lock(mu_);
  queue_.emplace_back(job, std::move(lookup));
  ++in_flight_;
  if (idle_ == 0 && threads_.size() < limit_) threads_.emplace_back([this] { work(); });
  else work_.notify_one();
}

size_t LookupPool::in_flight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

std::vector<std::pair<plan::JobId, Served>> LookupPool::take() {
  std::lock_guard lock(mu_);
  std::vector<std::pair<plan::JobId, Served>> out;
  out.swap(results_);
  in_flight_ -= out.size();
  return out;
}

void LookupPool::wait(int max_ms) {
  std::unique_lock lock(mu_);
  done_.wait_for(lock, std::chrono::milliseconds(max_ms),
                 [&] { return !results_.empty() || in_flight_ == 0; });
}

void LookupPool::drain() {
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

void LookupPool::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_;
    work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (stopping_) return;
    auto [job, lookup] = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    const Served served = lookup();
    lock.lock();
    --running_;
    results_.emplace_back(job, served);
    done_.notify_all();
    if (on_result_) {
      lock.unlock();
      on_result_();
      lock.lock();
    }
  }
}

}  // namespace ob::exec
