// One engine call's context (reapi_call.hpp).
#include "reapi_call.hpp"

#include "reapi_messages.hpp"

namespace ob::reapi {

namespace {
constexpr const char* kMetadataKey = "build.bazel.remote.execution.v2.requestmetadata-bin";
}  // namespace

void CallRegistry::add(grpc::ClientContext* ctx) {
  std::lock_guard lock(mu_);
  if (cancelled_) ctx->TryCancel();
  active_.insert(ctx);
}

void CallRegistry::remove(grpc::ClientContext* ctx) {
  std::lock_guard lock(mu_);
  active_.erase(ctx);
}

void CallRegistry::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  for (auto* ctx : active_) ctx->TryCancel();
}

Call::Call(const Endpoint& endpoint, CallRegistry& calls, CallBudget& budget, int timeout_ms,
           const std::string& action_id, const Action* action, uint64_t bytes)
    : Call(endpoint, calls,
           std::chrono::system_clock::now() +
               std::chrono::milliseconds(budget.limit_ms(timeout_ms, budget.allowance_ms(bytes))),
           action_id, action) {
  budget_ = &budget;
  allowance_ms_ = budget.allowance_ms(bytes);
}

Call::Call(const Endpoint& endpoint, CallRegistry& calls, std::chrono::system_clock::time_point deadline,
           const std::string& action_id, const Action* action)
    : calls_(calls) {
  ctx.set_deadline(deadline);
  ctx.AddMetadata(kMetadataKey, request_metadata(endpoint, action_id, action));
  for (const auto& [k, v] : endpoint.headers) ctx.AddMetadata(k, v);
  calls_.add(&ctx);
}

Call::~Call() {
  if (budget_) {
    const auto took = std::chrono::steady_clock::now() - start_;
    budget_->charge(std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), allowance_ms_);
  }
  calls_.remove(&ctx);
}

}  // namespace ob::reapi
