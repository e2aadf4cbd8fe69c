// The Remote Execution API v2 client (docs/DISTRIBUTED.md), on gRPC C++ and
// the messages generated from the REAPI protos at build time. Built as the
// module libob-remote-execution.so and opened by the remote runner only when
// remote_execution is set; its one entry point is ob_reapi_open_v8. Every call
// carries the RequestMetadata header and a deadline; every download a size cap
// and a digest check.
#include <fcntl.h>
#include <cerrno>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>

#include <grpcpp/grpcpp.h>

#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "google/bytestream/bytestream.grpc.pb.h"
#include "google/longrunning/operations.pb.h"
#include "offload_build/exec/remote/client.hpp"
#include "reapi_budget.hpp"
#include "reapi_call.hpp"
#include "reapi_messages.hpp"
#include "reapi_upload.hpp"

namespace ob::reapi {
namespace {

namespace bs = google::bytestream;
using Clock = std::chrono::system_clock;

constexpr size_t kInlineValueBytes = 256 << 10;  // a stored value sent inline too (put_value)
constexpr size_t kStreamWindowBytes = 4 << 20;  // what one stream may have in flight to us

class GrpcClient final : public Client {
 public:
  GrpcClient(const Endpoint& endpoint, Sha256Hex sha256) : endpoint_(endpoint), sha256_(sha256) {
    grpc::ChannelArguments args;
    // No answer is held whole past kMaxMessageBytes (an engine's inlined
    // text or value, a chunk): blobs come in chunks, each read capped (HeldBytes).
    args.SetMaxReceiveMessageSize(int(kMaxMessageBytes));
    args.SetMaxSendMessageSize(64 << 20);
    // What the engine may stream ahead of our reads: a fixed window a stream, not
    // one grown by bandwidth probes (tens of MiB in gRPC's buffers, outside HeldBytes).
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, int(kStreamWindowBytes));
    auto creds = endpoint.tls ? grpc::SslCredentials(grpc::SslCredentialsOptions{})
                              : grpc::InsecureChannelCredentials();
    channel_ = grpc::CreateCustomChannel(endpoint.target, creds, args);
    capabilities_ = re::Capabilities::NewStub(channel_);
    cas_ = re::ContentAddressableStorage::NewStub(channel_);
    ac_ = re::ActionCache::NewStub(channel_);
    execution_ = re::Execution::NewStub(channel_);
    bytestream_ = bs::ByteStream::NewStub(channel_);
  }

  bool capabilities(Capabilities& out, std::string& error) override {
    if (!channel_->WaitForConnected(Clock::now() + std::chrono::milliseconds(endpoint_.connect_timeout_ms))) {
      error = "cannot connect within " + std::to_string(endpoint_.connect_timeout_ms) + " ms";
      return false;
    }
    Call call(*this, endpoint_.call_timeout_ms, "capabilities");
    re::GetCapabilitiesRequest req;
    req.set_instance_name(endpoint_.instance);
    re::ServerCapabilities caps;
    auto s = capabilities_->GetCapabilities(&call.ctx, req, &caps);
    if (!s.ok()) {
      error = "GetCapabilities: " + status_text(s);
      return false;
    }
    if (!read_capabilities(caps, out, error)) return false;
    std::lock_guard lock(mutex_);
    caps_ = out;
    return true;
  }

  bool run(const Action& action, ActionResult& result, std::string& error) override {
    if (!run_within_budget(action, result, error)) {
      budget_.too_slow(error);  // a call cut short by the budget says so
      return false;
    }
    return true;
  }

  bool get_value(const std::string& kind, const std::string& key, uint64_t max_bytes, std::string& text,
                 std::string& error, std::shared_ptr<void>* room) override {
    text.clear();
    if (!stores_values()) return true;  // only an engine that lets clients write its action cache holds one
    if (budget_.too_slow(error)) return false;
    const Action action = value_action(kind, key);
    const Prepared p = prepare(action, sha256_);
    const std::string id = p.action_digest.hash();
    re::ActionResult ar;
    {
      Call call(*this, endpoint_.call_timeout_ms, id, &action);
      re::GetActionResultRequest req;
      req.set_instance_name(endpoint_.instance);
      *req.mutable_action_digest() = p.action_digest;
      req.add_inline_output_files(kind);
      auto s = ac_->GetActionResult(&call.ctx, req, &ar);
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) return true;
      if (!s.ok()) {
        error = "GetActionResult: " + status_text(s);
        return false;
      }
    }
    for (auto& f : *ar.mutable_output_files()) {
      if (f.path() != kind) continue;
      // Refused before it is read: over its cap, or more than the build may hold now.
      const uint64_t size = uint64_t(std::max<int64_t>(f.digest().size_bytes(), 0));
      if (size > std::min(max_bytes, endpoint_.max_blob_bytes)) {
        error = "a value of " + std::to_string(size) + " bytes, over the " +
                std::to_string(std::min(max_bytes, endpoint_.max_blob_bytes) >> 10) + " KiB a " + kind + " may have";
        return false;
      }
      auto hold = std::make_shared<Room>();
      hold->pool = held_;  // the room outlives this client if its caller keeps it
      if (!held_->take(size, call_deadline(), hold->hold, error)) return false;
      const bool inline_value = !f.contents().empty() || size == 0;
      if (inline_value) text = std::move(*f.mutable_contents());
      if (!(inline_value ? verify(f.digest(), text, error) : read_blob(f.digest(), text, error, id))) {
        std::string().swap(text);  // its room given back with it
        return false;
      }
      if (room) *room = std::move(hold);  // held while the caller keeps the value
      return true;
    }
    return true;
  }

  bool put_value(const std::string& kind, const std::string& key, const std::string& text,
                 std::string& error) override {
    return put_values(kind, {{key, text}}, error);
  }

  bool put_values(const std::string& kind, const std::vector<std::pair<std::string, std::string>>& values,
                  std::string& error) override {
    if (!stores_values()) {
      error = "the engine does not let clients write its action cache (update_enabled is false)";
      return false;
    }
    if (values.empty()) return true;
    if (budget_.too_slow(error)) return false;
    // Every value's action and blob in one upload (less what went with an
    // action: Action::values_after), then a result per value.
    std::vector<Action> actions;
    std::vector<Prepared> prepared;
    std::vector<re::Digest> blobs(values.size());
    Prepared all;
    for (size_t i = 0; i < values.size(); ++i) {
      actions.push_back(value_action(kind, values[i].first));
      prepared.push_back(prepare_value(actions.back(), values[i].second, sha256_, blobs[i]));
      all.blobs.insert(prepared.back().blobs.begin(), prepared.back().blobs.end());
    }
    uint64_t bytes = 0;
    if (!upload(all, actions.front(), bytes, error, prepared.front().action_digest.hash(), /*ask_first=*/false))
      return false;
    for (size_t i = 0; i < values.size(); ++i)
      if (!update_value(kind, values[i].second, actions[i], prepared[i], blobs[i], error)) return false;
    return true;
  }

  bool stores_values() const override {
    std::lock_guard lock(mutex_);
    return caps_.update_enabled;
  }

  bool run_within_budget(const Action& action, ActionResult& result, std::string& error) {
    result = {};
    if (budget_.too_slow(error)) return false;
    Prepared p = prepare(action, sha256_);
    result.action_digest = p.action_key;
    const std::string id = p.action_digest.hash();
    if (!action.do_not_cache && !action.skip_cache_lookup && !action.not_cached) {
      Call call(*this, endpoint_.call_timeout_ms, id, &action);
      re::GetActionResultRequest req;
      req.set_instance_name(endpoint_.instance);
      *req.mutable_action_digest() = p.action_digest;
      req.set_inline_stdout(true);
      req.set_inline_stderr(true);
      // Small outputs in the answer itself (where the engine inlines them): no ByteStream Read each.
      for (const auto& o : action.output_files) req.add_inline_output_files(o);
      re::ActionResult cached;
      auto s = ac_->GetActionResult(&call.ctx, req, &cached);
      if (s.ok()) {
        if (fetch(action, cached, result, error, id)) {
          result.cached = true;
          return true;
        }
        // An entry we cannot use (an output the CAS lost): execute instead.
      } else if (s.error_code() != grpc::StatusCode::NOT_FOUND) {
        error = "GetActionResult: " + status_text(s);
        return false;
      }
    }
    for (const auto& v : action.values_after) {
      re::Digest blob;
      const Prepared value = prepare_value(value_action(v.kind, v.key), v.text, sha256_, blob);
      p.blobs.insert(value.blobs.begin(), value.blobs.end());
    }
    re::ExecuteResponse response;
    // Twice at most: an Execute that finds an input missing (a blob the CAS
    // held and evicted since) is answered FAILED_PRECONDITION; the blobs are
    // then asked about and sent again.
    for (int attempt = 0;; ++attempt) {
      if (!upload(p, action, result.uploaded_bytes, error, id, true) || budget_.too_slow(error) ||
          !timed_execute(p, action, id, response, error))
        return false;
      if (response.status().code() != int(grpc::StatusCode::FAILED_PRECONDITION) || attempt == 1) break;
      known_.forget(p.blobs);
    }
    if (response.status().code() != 0) {
      error = "Execute: " + status_text(grpc::Status(grpc::StatusCode(response.status().code()),
                                                     response.status().message()));
      return false;
    }
    if (!fetch(action, response.result(), result, error, id)) return false;
    result.cached = response.cached_result();
    return true;
  }

  // execute(), charged to the budget past the command's run (CallBudget::execute_allowance_ms).
  bool timed_execute(const Prepared& p, const Action& action, const std::string& id, re::ExecuteResponse& response,
                     std::string& error) {
    const auto start = std::chrono::steady_clock::now();
    const bool ok = execute(p, action, id, response, error);
    const int64_t took =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    budget_.charge(took, budget_.execute_allowance_ms(took, ok ? reported_run_ms(response.result()) : -1));
    return ok;
  }

  // Execute with the streamed Operation (WaitExecution after a dropped
  // stream): its response, whatever its status.
  bool execute(const Prepared& p, const Action& action, const std::string& id, re::ExecuteResponse& response,
               std::string& error) {
    re::ExecuteRequest req;
    req.set_instance_name(endpoint_.instance);
    *req.mutable_action_digest() = p.action_digest;
    req.set_skip_cache_lookup(action.do_not_cache || action.skip_cache_lookup);
    const auto deadline = Clock::now() + std::chrono::milliseconds(endpoint_.execution_timeout_ms);
    google::longrunning::Operation op;
    std::string name;
    {
      Call call(*this, deadline, id, &action);
      auto reader = execution_->Execute(&call.ctx, req);
      if (!read_operation(*reader, op, name, call.ctx, calls_.cancelled(), error, "Execute")) return false;
    }
    // A stream dropped before the operation was done: ask for it by name.
    for (int attempt = 0; !op.done() && attempt < 3; ++attempt) {
      if (name.empty()) {
        error = "Execute: the stream ended before the operation had a name";
        return false;
      }
      if (Clock::now() >= deadline || calls_.cancelled()) break;
      re::WaitExecutionRequest wait;
      wait.set_name(name);
      Call call(*this, deadline, id, &action);
      auto reader = execution_->WaitExecution(&call.ctx, wait);
      if (!read_operation(*reader, op, name, call.ctx, calls_.cancelled(), error, "WaitExecution")) return false;
    }
    if (!op.done()) {
      if (error.empty()) error = "Execute: no result within " + std::to_string(endpoint_.execution_timeout_ms / 1000) + " s";
      return false;
    }
    if (op.has_error()) {  // as a response with that status (FAILED_PRECONDITION is retried)
      *response.mutable_status() = op.error();
      return true;
    }
    if (!op.response().UnpackTo(&response)) {
      error = "Execute: the operation's response is not an ExecuteResponse";
      return false;
    }
    return true;
  }

  void cancel() override { calls_.cancel(); }

 private:
  // One call (reapi_call.hpp): every call but Execute's draws on budget_,
  // allowed what moving `bytes` takes.
  struct Call : reapi::Call {
    Call(GrpcClient& c, int timeout_ms, const std::string& action_id, const Action* action = nullptr,
         uint64_t bytes = 0)
        : reapi::Call(c.endpoint_, c.calls_, c.budget_, timeout_ms, action_id, action, bytes) {}
    Call(GrpcClient& c, Clock::time_point deadline, const std::string& action_id, const Action* action)
        : reapi::Call(c.endpoint_, c.calls_, deadline, action_id, action) {}
  };

  // UpdateActionResult: `text` (its blob uploaded) as the one output of the
  // value's action, inline too where small.
  bool update_value(const std::string& kind, const std::string& text, const Action& action, const Prepared& p,
                    const re::Digest& blob, std::string& error) {
    const std::string id = p.action_digest.hash();
    Call call(*this, endpoint_.call_timeout_ms, id, &action);
    re::UpdateActionResultRequest req;
    req.set_instance_name(endpoint_.instance);
    *req.mutable_action_digest() = p.action_digest;
    auto* result = req.mutable_action_result();
    if (!text.empty()) {
      auto* out = result->add_output_files();
      out->set_path(kind);
      *out->mutable_digest() = blob;
      // Inline too where small: an engine storing it as sent serves it in one call.
      if (text.size() <= kInlineValueBytes && !refuses_inline_) out->set_contents(text);
    }
    re::ActionResult stored;
    auto s = ac_->UpdateActionResult(&call.ctx, req, &stored);
    if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT && result->output_files_size() == 1 &&
        !result->output_files(0).contents().empty()) {
      // An engine that takes no inline contents in a result it stores: the
      // digest alone, from now on.
      refuses_inline_ = true;
      result->mutable_output_files(0)->clear_contents();
      Call again(*this, endpoint_.call_timeout_ms, id, &action);
      s = ac_->UpdateActionResult(&again.ctx, req, &stored);
    }
    if (!s.ok()) {
      error = "UpdateActionResult: " + status_text(s);
      return false;
    }
    return true;
  }

  // The blobs the CAS is not known to hold (reapi_upload.hpp): FindMissingBlobs
  // first where `ask_first` and they are many, then BatchUpdateBlobs (small
  // ones, up to the engine's batch size) and ByteStream Write (the rest).
  bool upload(const Prepared& p, const Action& action, uint64_t& bytes, std::string& error, const std::string& id,
              bool ask_first) {
    UploadPlan plan = plan_upload(p.blobs, known_, ask_first);
    if (!plan.ask.empty()) {
      re::FindMissingBlobsRequest find;
      find.set_instance_name(endpoint_.instance);
      for (const auto& d : plan.ask) *find.add_blob_digests() = d;
      re::FindMissingBlobsResponse missing;
      Call call(*this, endpoint_.call_timeout_ms, id, &action);
      auto s = cas_->FindMissingBlobs(&call.ctx, find, &missing);
      if (!s.ok()) {
        error = "FindMissingBlobs: " + status_text(s);
        return false;
      }
      std::set<std::string> named;
      for (const auto& d : missing.missing_blob_digests()) named.insert(d.hash());
      std::vector<re::Digest> held;
      for (const auto& d : plan.ask) (named.count(d.hash()) ? plan.send : held).push_back(d);
      if (named.size() != plan.send.size()) {
        error = "FindMissingBlobs named a blob we did not ask about";
        return false;
      }
      known_.add(held);
    }
    const int64_t budget = batch_budget();
    re::BatchUpdateBlobsRequest batch;
    int64_t in_batch = 0;
    auto flush = [&]() -> bool {
      if (batch.requests_size() == 0) return true;
      batch.set_instance_name(endpoint_.instance);
      re::BatchUpdateBlobsResponse resp;
      Call call(*this, endpoint_.call_timeout_ms, id, &action, uint64_t(in_batch));
      auto s = cas_->BatchUpdateBlobs(&call.ctx, batch, &resp);
      if (!s.ok()) {
        error = "BatchUpdateBlobs: " + status_text(s);
        return false;
      }
      for (const auto& r : resp.responses())
        if (r.status().code() != 0) {
          error = "BatchUpdateBlobs: blob " + r.digest().hash() + ": " + r.status().message();
          return false;
        }
      batch.Clear();
      in_batch = 0;
      return true;
    };
    for (const auto& d : plan.send) {
      auto it = p.blobs.find(d.hash());
      std::string data;
      if (!blob_bytes(it->second.second, it->second.first, sha256_, data, error)) return false;
      bytes += data.size();
      if (int64_t(data.size()) > budget) {
        if (!write_stream(it->second.first, data, error, id, action)) return false;
        continue;
      }
      if (in_batch + int64_t(data.size()) > budget && !flush()) return false;
      auto* r = batch.add_requests();
      *r->mutable_digest() = it->second.first;
      in_batch += int64_t(data.size());
      r->set_data(std::move(data));
    }
    if (!flush()) return false;
    known_.add(plan.send);
    return true;
  }

  bool write_stream(const re::Digest& d, const std::string& data, std::string& error, const std::string& id,
                    const Action& action) {
    const std::string name = upload_resource(endpoint_.instance, d);
    Call call(*this, endpoint_.call_timeout_ms, id, &action, data.size());
    return write_chunks(*bytestream_, call.ctx, name, d, data, error);
  }

  // ByteStream Read of one blob, at most max_blob_bytes, checked against its digest.
  // With `limit`: only its first `limit` bytes, unverified (a command's text, never an output).
  bool read_blob(const re::Digest& d, std::string& out, std::string& error, const std::string& id,
                 uint64_t limit = 0) {
    out.clear();
    if (!limit && uint64_t(d.size_bytes()) > endpoint_.max_blob_bytes) {
      error = "an output of " + std::to_string(d.size_bytes()) + " bytes is over the cap (max-output-size)";
      return false;
    }
    if (d.size_bytes() == 0) return verify(d, out, error);
    const uint64_t want = limit ? std::min<uint64_t>(limit, uint64_t(d.size_bytes())) : uint64_t(d.size_bytes());
    out.reserve(want);  // at most the cap: one allocation, never doubled
    Call call(*this, endpoint_.call_timeout_ms, id, nullptr, want);
    bs::ReadRequest req;
    req.set_resource_name(read_resource(endpoint_.instance, d));
    if (limit) req.set_read_limit(int64_t(limit));
    auto reader = bytestream_->Read(&call.ctx, req);
    bs::ReadResponse chunk;
    while (reader->Read(&chunk)) {
      const size_t room = want + 1 - std::min<size_t>(want + 1, out.size());  // one byte past: "more" is seen
      out.append(chunk.data(), 0, room);
      if (limit && out.size() >= limit) {
        out.resize(limit);
        call.ctx.TryCancel();
        reader->Finish();
        return true;
      }
      if (int64_t(out.size()) > d.size_bytes()) {
        call.ctx.TryCancel();
        error = "ByteStream Read sent more bytes than the digest's size";
        reader->Finish();
        return false;
      }
    }
    auto s = reader->Finish();
    if (!s.ok()) {
      error = "ByteStream Read: " + status_text(s);
      return false;
    }
    if (limit) return true;
    return verify(d, out, error);
  }

  bool verify(const re::Digest& d, const std::string& data, std::string& error) const {
    return verify_blob(d, data, sha256_, error);
  }

  // stdout, stderr and every declared output of `ar` into `result`.
  bool fetch(const Action& action, const re::ActionResult& ar, ActionResult& result, std::string& error,
             const std::string& id) {
    result.exit_code = ar.exit_code();
    read_execution_metadata(ar.execution_metadata(), result);
    // The command's text: at most max_text_bytes kept (an engine may send
    // hundreds of megabytes); a blob over it is read only that far.
    const uint64_t cap = endpoint_.max_text_bytes;
    auto text = [&](const std::string& raw, const re::Digest& d, bool has, std::string& out) {
      if (!raw.empty() || !has) {
        out = raw.substr(0, cap);
        result.text_dropped += raw.size() - out.size();
        return true;
      }
      if (uint64_t(d.size_bytes()) <= cap) return read_blob(d, out, error, id);
      result.text_dropped += uint64_t(d.size_bytes()) - cap;
      return read_blob(d, out, error, id, cap);
    };
    if (!text(ar.stdout_raw(), ar.stdout_digest(), ar.has_stdout_digest(), result.stdout_text)) return false;
    if (!text(ar.stderr_raw(), ar.stderr_digest(), ar.has_stderr_digest(), result.stderr_text)) return false;
    if (ar.exit_code() != 0) return true;  // a failed command's outputs are not asked for
    std::map<std::string, const re::OutputFile*> by_path;
    for (const auto& f : ar.output_files()) by_path[f.path()] = &f;
    std::vector<const re::OutputFile*> files;
    std::vector<re::Digest> unread;  // neither inline nor empty
    std::map<std::string, int> uses;  // of each unread hash
    uint64_t unread_bytes = 0;
    for (const auto& want : action.output_files) {
      auto it = by_path.find(want);
      if (it == by_path.end()) {
        error = "the result lacks the output " + want;
        return false;
      }
      files.push_back(it->second);
      const re::Digest& d = it->second->digest();
      if (uint64_t(std::max<int64_t>(d.size_bytes(), 0)) > endpoint_.max_blob_bytes) {  // named before the pool's cap
        error = "an output of " + std::to_string(d.size_bytes()) + " bytes is over the cap (max-output-size)";
        return false;
      }
      if (it->second->contents().empty() && d.size_bytes() != 0 && uses[d.hash()]++ == 0) {
        unread.push_back(d);
        unread_bytes += uint64_t(std::max<int64_t>(d.size_bytes(), 0));
      }
    }
    // Room for them all before any is read: a build holds at most held_'s cap at once.
    HeldBytes::Hold hold;
    if (!held_->take(unread_bytes, call_deadline(), hold, error)) return false;
    std::map<std::string, std::string> read;  // by hash
    if (!read_blobs(unread, read, error, id)) return false;
    for (size_t i = 0; i < files.size(); ++i) {
      const re::OutputFile& f = *files[i];
      OutputFile out{action.output_files[i], {}, f.is_executable()};
      if (!f.contents().empty() || f.digest().size_bytes() == 0) {
        out.content = f.contents();
        if (uint64_t(out.content.size()) > endpoint_.max_blob_bytes) {
          error = "an inlined output is over the cap";
          return false;
        }
        if (!verify(f.digest(), out.content, error)) return false;
      } else {
        std::string& bytes = read[f.digest().hash()];
        out.content = --uses[f.digest().hash()] == 0 ? std::move(bytes) : bytes;
      }
      result.outputs.push_back(std::move(out));
    }
    return true;
  }

  // The blobs `want` by hash, each checked against its digest and the cap:
  // two or more that fit the engine's batch size in one BatchReadBlobs (an
  // engine without it, asked once, or a blob it did not answer: read alone),
  // the others with a ByteStream Read each.
  bool read_blobs(const std::vector<re::Digest>& want, std::map<std::string, std::string>& out, std::string& error,
                  const std::string& id) {
    if (!no_batch_read_ && read_in_one_batch(want, endpoint_.max_blob_bytes, batch_budget())) {
      re::BatchReadBlobsRequest req;
      req.set_instance_name(endpoint_.instance);
      std::map<std::string, const re::Digest*> asked;
      for (const auto& d : want)
        if (asked.emplace(d.hash(), &d).second) *req.add_digests() = d;
      re::BatchReadBlobsResponse resp;
      Call call(*this, endpoint_.call_timeout_ms, id);
      auto s = cas_->BatchReadBlobs(&call.ctx, req, &resp);
      if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) no_batch_read_ = true;  // Bazel's worker: asked once
      if (!s.ok() && !no_batch_read_) {
        error = "BatchReadBlobs: " + status_text(s);
        return false;
      }
      for (auto& r : *resp.mutable_responses()) {
        auto it = asked.find(r.digest().hash());
        if (r.status().code() != 0 || it == asked.end()) continue;
        if (!verify(*it->second, r.data(), error)) return false;
        out[it->first] = std::move(*r.mutable_data());
      }
    }
    for (const auto& d : want)
      if (!out.count(d.hash()) && !read_blob(d, out[d.hash()], error, id)) return false;
    return true;
  }

  // How long a read may wait for room to hold what it reads (HeldBytes).
  Clock::time_point call_deadline() const { return Clock::now() + std::chrono::milliseconds(endpoint_.call_timeout_ms); }

  int64_t batch_budget() const {  // the engine's batch size, less room for the messages' own bytes
    std::lock_guard lock(mutex_);
    return caps_.max_batch_bytes - 64 * 1024;
  }

  Endpoint endpoint_;
  CallBudget budget_{endpoint_};
  Sha256Hex sha256_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<re::Capabilities::Stub> capabilities_;
  std::unique_ptr<re::ContentAddressableStorage::Stub> cas_;
  std::unique_ptr<re::ActionCache::Stub> ac_;
  std::unique_ptr<re::Execution::Stub> execution_;
  std::unique_ptr<bs::ByteStream::Stub> bytestream_;
  mutable std::mutex mutex_;  // caps_
  CallRegistry calls_;
  // A value's room, kept by get_value's caller: the hold goes before its pool.
  struct Room {
    std::shared_ptr<HeldBytes> pool;
    HeldBytes::Hold hold;
  };
  std::shared_ptr<HeldBytes> held_ = std::make_shared<HeldBytes>(held_bytes_cap(endpoint_));
  std::atomic<bool> refuses_inline_{false};  // a stored result may not carry inline contents
  std::atomic<bool> no_batch_read_{false};   // BatchReadBlobs is UNIMPLEMENTED there
  Capabilities caps_;
  KnownBlobs known_;  // what the CAS holds, as this client learned it
};

}  // namespace
}  // namespace ob::reapi

extern "C" __attribute__((visibility("default"))) ob::reapi::Client* ob_reapi_open_v8(
    const ob::reapi::Endpoint* endpoint, ob::reapi::Sha256Hex sha256, std::string* error) {
  try {
    return new ob::reapi::GrpcClient(*endpoint, sha256);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return nullptr;
  }
}
