// One engine call's context (reapi_call.cpp): its deadline, the
// RequestMetadata and configured headers, registered so that cancel() can
// cut it short; every call but Execute's is charged to the build's time
// budget (reapi_budget.hpp) and may take only what is left of it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include <grpcpp/grpcpp.h>

#include "offload_build/exec/remote/client.hpp"
#include "reapi_budget.hpp"

namespace ob::reapi {

// The calls in flight, for cancel() from any thread.
class CallRegistry {
 public:
  void add(grpc::ClientContext* ctx);  // cancelled at once after cancel()
  void remove(grpc::ClientContext* ctx);
  void cancel();
  const std::atomic<bool>& cancelled() const { return cancelled_; }

 private:
  std::mutex mu_;
  std::set<grpc::ClientContext*> active_;
  std::atomic<bool> cancelled_{false};
};

class Call {
 public:
  // A call of `timeout_ms` at most, charged to `budget` past what moving
  // `bytes` is allowed.
  Call(const Endpoint& endpoint, CallRegistry& calls, CallBudget& budget, int timeout_ms, const std::string& action_id,
       const Action* action, uint64_t bytes = 0);
  // A call until `deadline` (Execute's, WaitExecution's: charged by the caller).
  Call(const Endpoint& endpoint, CallRegistry& calls, std::chrono::system_clock::time_point deadline,
       const std::string& action_id, const Action* action);
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call();
  grpc::ClientContext ctx;

 private:
  CallRegistry& calls_;
  CallBudget* budget_ = nullptr;
  int64_t allowance_ms_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace ob::reapi
