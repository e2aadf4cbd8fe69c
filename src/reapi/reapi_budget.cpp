// The budgets of one build's engine calls (reapi_budget.hpp).
#include "reapi_budget.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ob::reapi {

CallBudget::CallBudget(const Endpoint& endpoint)
    : endpoint_(endpoint),
      rule_(util::budget_rule(endpoint.call_timeout_ms, util::healthy_call_ms(endpoint.connect_timeout_ms))) {}

int64_t CallBudget::allowance_ms(uint64_t bytes) const { return rule_.allowance_ms + int64_t(bytes / kHealthyBytesPerMs); }

int64_t CallBudget::execute_allowance_ms(int64_t took_ms, int64_t run_ms) const {
  // An engine that gives no times (Bazel's worker) is allowed call-timeout
  // for the command's run; one that does, the run it reports, never more than the call took.
  const int64_t run = run_ms < 0 ? endpoint_.call_timeout_ms : run_ms;
  return rule_.allowance_ms + std::clamp<int64_t>(run, 0, std::max<int64_t>(took_ms, 0));
}

int64_t CallBudget::spent_ms() const {
  if (endpoint_.budget_file.empty()) return slow_ms_.load();
  const int fd = ::open(endpoint_.budget_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return slow_ms_.load();
  char buf[64 << 10];
  size_t have = 0;
  for (ssize_t n; have < sizeof buf && (n = ::read(fd, buf + have, sizeof buf - have)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    have += size_t(n);
  }
  ::close(fd);
  if (have == sizeof buf) return rule_.budget_ms;
  int64_t total = 0, line = 0;
  for (size_t i = 0; i < have; ++i) {
    if (buf[i] == '\n') total += line, line = 0;
    else if (buf[i] >= '0' && buf[i] <= '9' && line < rule_.budget_ms) line = line * 10 + (buf[i] - '0');
  }
  return std::max(total, slow_ms_.load());
}

void CallBudget::add_spent(int64_t ms) {
  if (ms <= 0) return;
  slow_ms_ += ms;
  if (endpoint_.budget_file.empty()) return;
  const int fd = ::open(endpoint_.budget_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const std::string line = std::to_string(ms) + "\n";  // one short write: records never interleave
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

bool CallBudget::too_slow(std::string& error) const {
  const int64_t slow = spent_ms();
  if (!rule_.spent(slow)) return false;
  error = "too slow: its calls took " + std::to_string(slow) + " ms past what a healthy engine takes (" +
          std::to_string(rule_.allowance_ms) +
          " ms a call) in all, the most one build waits for the engine (call-timeout + 1 s)";
  return true;
}

HeldBytes::Hold::~Hold() {
  if (pool_) pool_->give_back(bytes_);
}

bool HeldBytes::take(uint64_t bytes, std::chrono::system_clock::time_point deadline, Hold& hold,
                     std::string& error) {
  if (bytes > cap_) {
    error = "it sent " + std::to_string(bytes) + " bytes for one read, over the " + std::to_string(cap_ >> 20) +
            " MiB a build holds at once of what the engine sends (max-output-size)";
    return false;
  }
  std::unique_lock lock(mu_);
  if (!room_.wait_until(lock, deadline, [&] { return held_ + bytes <= cap_; })) {
    error = "no room within the call's deadline for " + std::to_string(bytes) + " bytes of what it sent (" +
            std::to_string(cap_ >> 20) + " MiB held at once at most)";
    return false;
  }
  held_ += bytes;
  hold.pool_ = this;
  hold.bytes_ += bytes;
  return true;
}

void HeldBytes::give_back(uint64_t bytes) {
  {
    std::lock_guard lock(mu_);
    held_ -= bytes;
  }
  room_.notify_all();
}

}  // namespace ob::reapi
