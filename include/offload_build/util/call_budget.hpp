// One build's time budget for a server's calls: remote storage's
// (storage/remote/layered.cpp) and the engine's (src/reapi/reapi_budget.cpp).
// Each call is allowed what a healthy server takes for it; all it takes past
// that allowance counts, and adds up over the build; each call may take only
// its allowance and what is left; once the budget is spent the server is
// dropped for the build with one warning. So a server that answers every
// call slowly, never failing one, costs a build about its timeout + 1 s in
// all, not a timeout per call.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ob::util {

struct BudgetRule {
  int64_t allowance_ms = 0;  // one call's free time (a healthy server's)
  int64_t budget_ms = 0;     // what the build's calls may take past their allowances, in all

  // The most a call may take, of its own timeout, when `spent_ms` is spent
  // and it is allowed `allowance_ms` (this rule's, or more for a call that moves many bytes).
  int64_t limit_ms(int64_t timeout_ms, int64_t spent_ms, int64_t allowance_ms) const {
    return std::min(timeout_ms, allowance_ms + std::max<int64_t>(0, budget_ms - spent_ms));
  }
  // What a call that took `took_ms` costs the budget.
  static int64_t cost_ms(int64_t took_ms, int64_t allowance_ms) { return std::max<int64_t>(0, took_ms - allowance_ms); }
  bool spent(int64_t spent_ms) const { return spent_ms >= budget_ms; }
};

// What a healthy server takes for one call (on loopback or a LAN:
// milliseconds), connect-timeout where that is less: a call's allowance.
inline constexpr int64_t kHealthyCallMs = 250;
inline int64_t healthy_call_ms(int64_t connect_timeout_ms) { return std::min(kHealthyCallMs, connect_timeout_ms); }

// The rule for calls of `timeout_ms` each, `allowance_ms` of each free: the
// first call's allowance and the budget make timeout + 1 s (at least timeout).
inline BudgetRule budget_rule(int64_t timeout_ms, int64_t allowance_ms) {
  return {allowance_ms, std::max(timeout_ms + 1000 - allowance_ms, timeout_ms)};
}

}  // namespace ob::util
