// The budgets of one build's engine calls (reapi_budget.cpp): the time they
// may take (CallBudget) and the bytes of what the engine sends held at once
// (HeldBytes).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "offload_build/exec/remote/client.hpp"
#include "offload_build/util/call_budget.hpp"

namespace ob::reapi {

// The bytes a call may move in each millisecond past its allowance (16 MB/s).
inline constexpr uint64_t kHealthyBytesPerMs = 16 << 10;

// The build's time budget for the engine's calls, as remote storage's
// (util/call_budget.hpp): each call is allowed what a healthy engine takes
// (util::healthy_call_ms, more for its bytes; an Execute
// also the command's run, as the engine reports it, or call-timeout where it
// reports no times), what calls take past that adds up, each call but
// Execute may take only what is left, and once the budget (call-timeout +
// 1 s in all) is spent run() fails as too slow. In launcher mode the build
// is the make run: its compiles share one budget (Endpoint::budget_file).
class CallBudget {
 public:
  explicit CallBudget(const Endpoint& endpoint);
  const util::BudgetRule& rule() const { return rule_; }
  // What a call that moves `bytes` is allowed.
  int64_t allowance_ms(uint64_t bytes = 0) const;
  // What an Execute that took `took_ms` is allowed; `run_ms`: the command's
  // run as the engine reports it, < 0 where it gives no times.
  int64_t execute_allowance_ms(int64_t took_ms, int64_t run_ms) const;
  // The most a call of `timeout_ms` allowed `allowance_ms` may take now.
  int64_t limit_ms(int64_t timeout_ms, int64_t allowance_ms) const {
    return rule_.limit_ms(timeout_ms, spent_ms(), allowance_ms);
  }
  // A call that took `took_ms`, allowed `allowance_ms`.
  void charge(int64_t took_ms, int64_t allowance_ms) { add_spent(util::BudgetRule::cost_ms(took_ms, allowance_ms)); }
  // What this build's calls took past their allowances: this client's, or
  // with endpoint.budget_file every client's of the make run (one decimal
  // number of milliseconds a line; a record too large to be ours counts as spent).
  int64_t spent_ms() const;
  // Whether the budget is spent (and `error` says so).
  bool too_slow(std::string& error) const;

 private:
  void add_spent(int64_t ms);
  const Endpoint& endpoint_;
  util::BudgetRule rule_;
  std::atomic<int64_t> slow_ms_{0};  // spent by this client's calls
};

// The bytes of what the engine sends (a value, a result's outputs) that this
// build holds at once: at most the cap (max-output-size, at least 128 MiB).
// A read takes room for what it will hold before it allocates any, waiting
// for room until its deadline; more than the cap is refused.
class HeldBytes {
 public:
  explicit HeldBytes(uint64_t cap) : cap_(cap) {}
  uint64_t cap() const { return cap_; }
  // Room taken, given back when it goes.
  class Hold {
   public:
    Hold() = default;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold();

   private:
    friend class HeldBytes;
    HeldBytes* pool_ = nullptr;
    uint64_t bytes_ = 0;
  };
  // Room for `bytes` more in `hold` (empty before), waited for until
  // `deadline`: false and `error` when they are over the cap or no room came in time.
  bool take(uint64_t bytes, std::chrono::system_clock::time_point deadline, Hold& hold, std::string& error);

 private:
  void give_back(uint64_t bytes);
  const uint64_t cap_;
  std::mutex mu_;
  std::condition_variable room_;
  uint64_t held_ = 0;
};

// The most one batch call moves (the engine's max_batch_total_size_bytes,
// at most this), and the most one answer may have (a batch, and room for
// its messages): an inlined text, value or output over it is refused whole.
inline constexpr int64_t kMaxBatchBytes = 4 << 20;
inline constexpr uint64_t kMaxMessageBytes = uint64_t(kMaxBatchBytes) + (1 << 20);

// HeldBytes' cap for `endpoint`.
inline constexpr uint64_t kMinHeldBytes = 128ull << 20;
inline uint64_t held_bytes_cap(const Endpoint& endpoint) { return std::max(kMinHeldBytes, endpoint.max_blob_bytes); }

}  // namespace ob::reapi
