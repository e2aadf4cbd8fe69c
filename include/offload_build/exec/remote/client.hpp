// The Remote Execution API v2 client's interface (docs/DISTRIBUTED.md): what
// the remote runner (exec/remote/runner.hpp) asks of an engine (Buildbarn,
// BuildBuddy, NativeLink, Bazel's reference worker). The client itself is the
// module libob-remote-execution.so (src/reapi/, gRPC and protobuf), opened
// with dlopen only when remote_execution is set: this header is all the two
// share, plain C++ types only, and no exception crosses it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ob::reapi {

// A SHA-256 digest as REAPI names a blob.
struct Digest {
  std::string hash;  // lower-case hex
  int64_t size = 0;
  bool operator==(const Digest&) const = default;
};

// Where the engine is and how to talk to it: the remote_execution setting,
// parsed (exec/remote/runner.hpp).
struct Endpoint {
  std::string target;    // "HOST:PORT" as gRPC takes it
  bool tls = false;      // grpcs://
  std::string instance;  // instance_name of every request
  // Sent with every call (authentication: "authorization", "Bearer ...").
  std::vector<std::pair<std::string, std::string>> headers;
  int connect_timeout_ms = 5000;      // reaching the engine at all
  int call_timeout_ms = 30000;        // each call but Execute/WaitExecution
  int execution_timeout_ms = 600000;  // one action, from Execute to its result
  // The most one downloaded output may have; and (at least 128 MiB) what
  // this build holds at once of what the engine sends.
  uint64_t max_blob_bytes = 256ull << 20;
  // The most of a command's stdout and of its stderr kept (ActionResult::
  // stdout_truncated): more is neither downloaded nor held.
  uint64_t max_text_bytes = 1ull << 20;
  // Where the time the engine's calls took is shared by the compiles of one
  // make run (launcher mode): each call appends what it took past its
  // allowance (src/reapi/reapi_budget.hpp), and every call may take only
  // what the run has left.
  // Empty: this client's own calls only.
  std::string budget_file;
  std::string tool_version;           // RequestMetadata.tool_details
  std::string invocation_id;          // one per build (RequestMetadata.tool_invocation_id)
};

// One file of an action's input root.
struct InputFile {
  std::string path;       // relative to the input root, '/'-separated
  Digest digest;          // of `local`'s content, computed by the caller
  std::filesystem::path local;  // read only when the engine lacks the blob
  bool executable = false;
};

struct Action {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // sorted by name
  std::string working_directory;                          // relative to the input root
  std::vector<std::string> output_files;                  // relative to working_directory, sorted
  std::vector<InputFile> inputs;
  int timeout_s = 0;            // Action.timeout (0: the engine's default)
  bool do_not_cache = false;    // never served from nor stored in the action cache
  bool skip_cache_lookup = false;  // never served from the action cache (executed; the engine may store it)
  bool not_cached = false;  // the caller knows the action cache lacks it: no GetActionResult first (Execute may still look)
  // Values (Client::put_value's) to be stored once this action ran: their
  // blobs go up with its inputs, so each put_value after sends only its
  // UpdateActionResult.
  struct Value {
    std::string kind, key, text;
  };
  std::vector<Value> values_after;
  std::string mnemonic;         // RequestMetadata.action_mnemonic: "device", "host-ir", ...
  std::string target_id;        // RequestMetadata.target_id: the job as --explain names it
};

struct OutputFile {
  std::string path;  // as named in Action::output_files
  std::string content;
  bool executable = false;
};

struct ActionResult {
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
  uint64_t text_dropped = 0;        // bytes of stdout and stderr over max_text_bytes, not kept
  std::vector<OutputFile> outputs;  // each verified against its digest
  bool cached = false;        // served from the engine's action cache (no execution)
  double queued_s = 0;        // the engine's queue time (its metadata)
  double executed_s = 0;      // the command's own run time on the worker (its metadata)
  std::string worker;         // ExecutedActionMetadata.worker
  std::string action_digest;  // HASH/SIZE: what the engine knows this action by
  uint64_t uploaded_bytes = 0;
};

struct Capabilities {
  bool exec_enabled = false;
  bool update_enabled = false;  // clients may write the action cache (dependency manifests)
  int64_t max_batch_bytes = 4 << 20;   // BatchUpdateBlobs total (0 from the engine: 4 MiB)
};

class Client {
 public:
  virtual ~Client() = default;
  // GetCapabilities: SHA-256 and execution supported. false and `error` when not
  // (or the engine cannot be reached).
  virtual bool capabilities(Capabilities& out, std::string& error) = 0;
  // Run one action: GetActionResult first (unless do_not_cache,
  // skip_cache_lookup or not_cached), then BatchUpdateBlobs / ByteStream Write
  // for the blobs the CAS is not known to hold (FindMissingBlobs first when
  // they are over 64 KiB: reapi_upload.hpp), Execute with the streamed Operation (WaitExecution after a dropped
  // stream), ByteStream Read of every output (size-capped, digest-checked).
  // A command that ran and failed is a result (exit_code != 0); false and
  // `error` only when the engine failed (unreachable, UNAVAILABLE, deadline,
  // bad digest, missing or oversized output): the caller runs it locally.
  virtual bool run(const Action& action, ActionResult& result, std::string& error) = 0;
  // A value offload-build keeps in the action cache (a job's dependency
  // manifest, exec/dependency_manifest.hpp; an entry of the local cache's
  // engine layer, exec/remote/layer.hpp): the one output of an action that
  // never runs, named by `kind` and `key`. Its text (at most `max_bytes`:
  // a bigger one is none), empty when the engine has none (never asked of an
  // engine without Capabilities::update_enabled, which cannot hold one).
  // false and `error` only when the engine failed. An engine kind without
  // them keeps none (the defaults). With `room`: what keeps the room `text`
  // takes in the build's cap on what the engine sends held at once, given
  // back when the caller drops it (without: when get_value returns).
  virtual bool get_value(const std::string& /*kind*/, const std::string& /*key*/, uint64_t /*max_bytes*/,
                         std::string& text, std::string& /*error*/, std::shared_ptr<void>* /*room*/ = nullptr) {
    text.clear();
    return true;
  }
  // Store `text` as the value named by `kind` and `key` (the blob, unless it
  // went up with an action's inputs (Action::values_after), sent without
  // asking whether the engine has it: a value is stored after a miss, so it
  // almost never has; then UpdateActionResult; empty `text`: none). false and `error` when the
  // engine failed or does not let clients write its action cache.
  virtual bool put_value(const std::string& /*kind*/, const std::string& /*key*/, const std::string& /*text*/,
                         std::string& error) {
    error = "this engine keeps no values";
    return false;
  }
  // Several values of one kind, (key, text) each: what put_value does for
  // each, the blobs sent together (one BatchUpdateBlobs where they fit).
  // false and `error` when any was not stored.
  virtual bool put_values(const std::string& kind, const std::vector<std::pair<std::string, std::string>>& values,
                          std::string& error) {
    for (const auto& [key, text] : values)
      if (!put_value(kind, key, text, error)) return false;
    return true;
  }
  // Whether put_value can store (the engine's capabilities, once asked).
  virtual bool stores_values() const { return false; }
  // Cancel every call in flight (Ctrl-C): run() returns false soon. Any thread.
  virtual void cancel() = 0;
};

// SHA-256 of `size` bytes at `data` as lower-case hex (the program's own, so
// the module needs no crypto library of its own).
using Sha256Hex = std::string (*)(const void* data, size_t size);

// The module's one entry point, found with dlsym(kOpenSymbol): a client for
// `endpoint` (nothing is sent yet), or nullptr and `error`.
using OpenFn = Client* (*)(const Endpoint* endpoint, Sha256Hex sha256, std::string* error);
inline constexpr const char* kOpenSymbol = "ob_reapi_open_v8";
// The most a dependency manifest may have.
inline constexpr uint64_t kMaxManifestBytes = 4ull << 20;
inline constexpr const char* kModuleName = "libob-remote-execution.so";

}  // namespace ob::reapi
