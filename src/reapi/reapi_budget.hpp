// The time budget of one build's engine calls (reapi_budget.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "offload_build/exec/remote_execution.hpp"

namespace ob::reapi {

// The build's time budget for the engine's calls: every call but Execute's draws on it (as remote
// storage's does, storage/remote/layered.cpp): what a call takes past
// connect-timeout (a healthy engine answers well within it) adds up, each
// call may take only what is left, and once it is spent run() fails. So an
// engine that answers every call just inside call-timeout costs a build
// about connect-timeout + call-timeout + 1 s, not a timeout per call. In
// launcher mode the build is the make run: its compiles share one budget
// (Endpoint::budget_file).
class CallBudget {
 public:
  explicit CallBudget(const Endpoint& endpoint) : endpoint_(endpoint) {}
  // The most this build's calls may take past connect-timeout.
  int64_t budget_ms() const;
  // What this build's calls took past connect-timeout: this client's, or with
  // endpoint.budget_file every client's of the make run (one decimal number of
  // milliseconds a line; a record too large to be ours counts as spent).
  int64_t spent_ms() const;
  void add_spent(int64_t ms);
  // Whether the budget is spent (and `error` says so).
  bool too_slow(std::string& error) const;

 private:
  const Endpoint& endpoint_;
  std::atomic<int64_t> slow_ms_{0};  // spent past connect-timeout by this client's calls
};

}  // namespace ob::reapi
