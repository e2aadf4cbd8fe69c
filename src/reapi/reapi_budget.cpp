// The time budget of one build's engine calls (reapi_budget.hpp).
#include "reapi_budget.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ob::reapi {

int64_t CallBudget::budget_ms() const {
  return std::max<int64_t>(endpoint_.call_timeout_ms + 1000 - endpoint_.connect_timeout_ms,
                           endpoint_.call_timeout_ms);
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
  if (have == sizeof buf) return budget_ms();
  int64_t total = 0, line = 0;
  for (size_t i = 0; i < have; ++i) {
    if (buf[i] == '\n') total += line, line = 0;
    else if (buf[i] >= '0' && buf[i] <= '9' && line < budget_ms()) line = line * 10 + (buf[i] - '0');
  }
  return std::max(total, slow_ms_.load());
}
void CallBudget::add_spent(int64_t ms) {
  slow_ms_ += ms;
  if (endpoint_.budget_file.empty() || ms <= 0) return;
  const int fd = ::open(endpoint_.budget_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const std::string line = std::to_string(ms) + "\n";  // one short write: records never interleave
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}
bool CallBudget::too_slow(std::string& error) const {
  const int64_t slow = spent_ms();
  if (slow < budget_ms()) return false;
  error = "too slow: its calls took " + std::to_string(slow) + " ms past connect-timeout (" +
          std::to_string(endpoint_.connect_timeout_ms) +
          " ms) in all, the most one build waits for the engine (connect-timeout + call-timeout + 1 s)";
  return true;
}

}  // namespace ob::reapi
