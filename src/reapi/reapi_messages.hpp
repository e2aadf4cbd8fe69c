// An action as REAPI messages (reapi_client.cpp sends them): the input root
// as a Merkle tree of Directory messages, the Command and the Action, with
// every blob the engine may lack.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "google/longrunning/operations.pb.h"
#include "offload_build/exec/remote/client.hpp"

namespace ob::reapi {

namespace re = build::bazel::remote::execution::v2;

// One blob this run may have to upload: in memory (trees, command, action,
// outputs) or a local file.
struct Blob {
  std::string data;
  std::filesystem::path file;
};

// Blobs by digest hash.
using BlobMap = std::map<std::string, std::pair<re::Digest, Blob>>;

// What an action is as messages: its blobs, and its digest.
struct Prepared {
  re::Digest action_digest;
  BlobMap blobs;
  std::string action_key;  // HASH/SIZE
};

// A blob's bytes: in memory, or the local file, which must still have the
// digest it was given (a file edited during the build is refused).
bool blob_bytes(const Blob& blob, const re::Digest& d, Sha256Hex sha256, std::string& out, std::string& error);
// Whether `data` has digest `d`; else false and `error`.
bool verify_blob(const re::Digest& d, const std::string& data, Sha256Hex sha256, std::string& error);
// The digest of `data` as REAPI names it.
re::Digest digest_of(const std::string& data, Sha256Hex sha256);
// The action's messages: the input root as a Merkle tree of Directory
// messages (children sorted by name, as the spec asks), the Command and the Action.
Prepared prepare(const Action& action, Sha256Hex sha256);
// A gRPC status as one line of text: its code's name, then its message (300 bytes at most).
std::string status_text(const grpc::Status& s);
// The worker, and the seconds queued and executing (0 where unset), of an execution's metadata.
void read_execution_metadata(const re::ExecutedActionMetadata& md, ActionResult& out);
// The command's run in milliseconds as the result's metadata says, or -1 where it gives no times.
int64_t reported_run_ms(const re::ActionResult& ar);
// A value kept in the action cache (Client::get_value) is the one output,
// named `kind`, of an action that never runs (no input root, a command no
// worker has: offload-build-KIND KEY).
Action value_action(const std::string& kind, const std::string& key);
// A value's action (value_action) as messages, `text`'s blob among them
// (`blob`: its digest).
Prepared prepare_value(const Action& value, const std::string& text, Sha256Hex sha256, re::Digest& blob);
// The resource name a ByteStream Read of `d` reads.
std::string read_resource(const std::string& instance, const re::Digest& d);
// GetCapabilities' answer as `out`: false and `error` when the engine
// cannot run our actions (no execution, not SHA-256).
bool read_capabilities(const re::ServerCapabilities& caps, Capabilities& out, std::string& error);
// The resource name a ByteStream Write of `d` uploads to (a fresh uuid in it).
std::string upload_resource(const std::string& instance, const re::Digest& d);

// The RequestMetadata header of one call, serialized: this tool, the
// build's invocation, `action_id` and, given the action, its mnemonic and target.
std::string request_metadata(const Endpoint& endpoint, const std::string& action_id, const Action* action);

// An Execute's (or WaitExecution's) stream read to its end: true with `op`
// done (a FAILED_PRECONDITION status becomes the operation's error: an input
// evicted, retried by the caller), or with `name` set and `error` saying why
// the stream dropped (UNAVAILABLE, an end without a result: asked again by
// name unless `cancelled` by then); false and `error` for any other failure.
template <class Reader>
bool read_operation(Reader& reader, google::longrunning::Operation& op, std::string& name, grpc::ClientContext& ctx,
                    const std::atomic<bool>& cancelled, std::string& error, const char* what) {
  google::longrunning::Operation next;
  while (reader.Read(&next)) {
    op = next;
    if (!op.name().empty()) name = op.name();
    if (op.done()) break;
  }
  if (op.done()) {
    ctx.TryCancel();
    reader.Finish();
    return true;
  }
  auto s = reader.Finish();
  if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    op.set_done(true);
    op.mutable_error()->set_code(int(s.error_code()));
    op.mutable_error()->set_message(s.error_message());
    return true;
  }
  if (s.ok() || s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    error = std::string(what) + ": " + (s.ok() ? "the stream ended without a result" : status_text(s));
    return !name.empty() && !cancelled;
  }
  error = std::string(what) + ": " + status_text(s);
  return false;
}

}  // namespace ob::reapi
