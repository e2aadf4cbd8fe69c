// A Remote Execution API v2 engine that lies, for the fault tests of remote
// execution (tests/integration/test_remote_faults.cpp, docs/DISTRIBUTED.md).
// A real gRPC C++ server on 127.0.0.1:PORT (the REAPI services generated from
// the same protos as the client): it stores what the client uploads, runs a
// compiler check (`COMPILER --version`) for real, and answers every other
// action, from its action cache and from Execute alike, with a result that is
// wrong in the way --mode says:
//
//   bad-digest  each output names a digest whose bytes in the CAS have another
//               digest (same size, other content)
//   missing     the result has no output files
//   oversized   each output names a digest of 1 TiB
//   other-compiler  the compiler check answered with another compiler's
//               --version (one worker of a pool upgraded in place)
//   slow        as bad-digest, and each GetActionResult, FindMissingBlobs and
//               BatchUpdateBlobs answered after --delay-ms (default 3100):
//               within a generous call-timeout, never failing a call
//   slow-failing  honest but slow: each GetActionResult answered NOT_FOUND
//               after --delay-ms, each Execute at once with the compile
//               failing (exit 1): no engine fault, the job reruns locally
//   strict-store  honest, clients may write its action cache
//               (update_enabled), but a stored result whose output carries
//               inline contents is refused (INVALID_ARGUMENT), as a strict
//               engine may; results are served as stored, never inline;
//               each Execute fails the compile (exit 1)
//   forging     an engine any client may write (update_enabled): results
//               kept as stored; a dependency manifest it holds none of is
//               answered with a forged one that lists no file (a planted
//               claim); each Execute logs its input root's files
//               (`Execute inputs a.c hard.h`) and fails the compile (exit 1)
//   slow-execute  honest but slow to execute: each GetActionResult answered
//               NOT_FOUND at once, each Execute after --delay-ms with the
//               compile failing (exit 1) and no execution metadata
//   bloated     clients may write its action cache (update_enabled), it keeps
//               nothing: each value asked for is a 60 MiB blob (its digest
//               true, ByteStream Read in 1 MiB chunks), each other action
//               not in its action cache and executed with the compile
//               failing, 60 MiB of stdout and of stderr by digest
//   evicting    as strict-store, but the first Execute of each action drops
//               the action's and its command's blobs from the CAS and
//               answers FAILED_PRECONDITION, as an engine whose CAS evicted
//               them since the client sent them
//
// Each call it answers is one line on stdout (the test's log; BatchReadBlobs
// with the number of blobs asked for), the
// action's mnemonic after GetActionResult, FindMissingBlobs and
// BatchUpdateBlobs: the test
// checks that the client asked for what it then refused, and what it asked.
//
//   ob_fake_reapi --port PORT --mode MODE
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <openssl/sha.h>

#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "google/bytestream/bytestream.grpc.pb.h"
#include "google/longrunning/operations.pb.h"

extern char** environ;

namespace {

namespace re = build::bazel::remote::execution::v2;
namespace bs = google::bytestream;

constexpr const char* kMetadataKey = "build.bazel.remote.execution.v2.requestmetadata-bin";

std::mutex log_m;
void say(const std::string& line) {
  std::lock_guard lock(log_m);
  std::cout << line << std::endl;
}

// The blobs the client uploaded, and the forged ones, by hash.
struct Store {
  std::mutex m;
  std::map<std::string, std::string> blobs;
  bool get(const std::string& hash, std::string& out) {
    std::lock_guard lock(m);
    auto it = blobs.find(hash);
    if (it == blobs.end()) return false;
    out = it->second;
    return true;
  }
  void put(const std::string& hash, std::string data) {
    std::lock_guard lock(m);
    blobs[hash] = std::move(data);
  }
};

std::string mode;
int delay_ms = 3100;
Store store;
std::mutex results_m;
std::map<std::string, re::ActionResult> results;  // strict-store: the action cache, by action hash
std::set<std::string> evicted;                     // evicting: the actions whose blobs were dropped

// The first time for this action: its and its command's blobs dropped, true.
bool evict_once(const re::Digest& action, const re::Action& a) {
  {
    std::lock_guard lock(results_m);
    if (!evicted.insert(action.hash()).second) return false;
  }
  std::lock_guard lock(store.m);
  store.blobs.erase(action.hash());
  store.blobs.erase(a.command_digest().hash());
  return true;
}

// The slow mode's wait before answering.
// Clients may write the action cache; results are kept as stored.
bool stores() { return mode == "strict-store" || mode == "evicting" || mode == "forging" || mode == "bloated"; }

std::string sha256_hex(const std::string& data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  std::string hex;
  char two[3];
  for (unsigned char c : md) {
    std::snprintf(two, sizeof two, "%02x", c);
    hex += two;
  }
  return hex;
}

// forging: a dependency manifest that lists no file, as the one output of the value's action.
re::ActionResult forged_manifest() {
  const std::string text = R"({"format":"offload-build dependency manifest 1","reads":[],"absent":[]})";
  re::ActionResult ar;
  auto* f = ar.add_output_files();
  f->set_path("dependency-manifest");
  f->set_contents(text);
  f->mutable_digest()->set_hash(sha256_hex(text));
  f->mutable_digest()->set_size_bytes(int64_t(text.size()));
  return ar;
}

// bloated's one blob (served from here, never copied into the store) and its digest.
const std::string& big_blob() {
  static const std::string blob(size_t(60) << 20, 'x');
  return blob;
}
re::Digest big_digest() {
  static const std::string hash = sha256_hex(big_blob());
  re::Digest d;
  d.set_hash(hash);
  d.set_size_bytes(int64_t(big_blob().size()));
  return d;
}

// bloated's answer: each value asked for (`mnemonic` a value's kind) the big
// blob, any other action the compile failing with the big blob as its text.
re::ActionResult bloated_result(const std::string& mnemonic, const std::vector<std::string>& paths) {
  re::ActionResult ar;
  if (mnemonic == "cache-entry" || mnemonic == "working-set" || mnemonic == "dependency-manifest") {
    for (const auto& path : paths) {
      auto* f = ar.add_output_files();
      f->set_path(path);
      *f->mutable_digest() = big_digest();
    }
    return ar;
  }
  ar.set_exit_code(1);
  *ar.mutable_stdout_digest() = big_digest();
  *ar.mutable_stderr_digest() = big_digest();
  return ar;
}

void dawdle() {
  if (mode == "slow" || mode == "slow-failing") std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
}

// Every call must carry the RequestMetadata header, as Bazel's worker asks.
grpc::Status check_metadata(grpc::ServerContext* ctx) {
  if (ctx->client_metadata().find(kMetadataKey) == ctx->client_metadata().end())
    return {grpc::StatusCode::INVALID_ARGUMENT, "no RequestMetadata header"};
  return grpc::Status::OK;
}

// The call's action mnemonic (RequestMetadata): what the client asks about
// ("device", "cache-entry", "dependency-manifest"...), for the log.
std::string mnemonic(grpc::ServerContext* ctx) {
  auto it = ctx->client_metadata().find(kMetadataKey);
  re::RequestMetadata md;
  if (it == ctx->client_metadata().end() || !md.ParseFromString(std::string(it->second.data(), it->second.size())))
    return "?";
  return md.action_mnemonic();
}

// `argv`'s stdout and exit code, run here (the compiler check only).
int run_here(const std::vector<std::string>& argv, std::string& out) {
  int pipe_fd[2];
  if (pipe(pipe_fd) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fd[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fd[1]);
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fd[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(pipe_fd[0]);
  if (rc != 0) return 127;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// The wrong result for `command`'s outputs (--mode).
re::ActionResult lie(const re::Command& command) {
  re::ActionResult ar;
  ar.set_exit_code(0);
  for (const auto& path : command.output_files()) {
    auto* f = ar.add_output_files();
    f->set_path(path);
    if (mode == "missing") {
      ar.clear_output_files();
      break;
    }
    if (mode == "oversized") {
      f->mutable_digest()->set_hash(std::string(64, 'e'));
      f->mutable_digest()->set_size_bytes(int64_t(1) << 40);
      continue;
    }
    // bad-digest: a digest named after one content, the CAS holding another
    // of the same size under it.
    const std::string forged = "not the object " + path + "\n";
    std::string hash(64, '0');
    std::snprintf(hash.data(), 17, "%016zx", std::hash<std::string>{}(path));
    hash[16] = '0';
    store.put(hash, forged);
    f->mutable_digest()->set_hash(hash);
    f->mutable_digest()->set_size_bytes(int64_t(forged.size()));
  }
  return ar;
}

bool load(const re::Digest& d, google::protobuf::Message& msg) {
  std::string data;
  return store.get(d.hash(), data) && msg.ParseFromString(data);
}

// The files of the input root under `dir`, each as " PATH" (forging's log).
void input_names(const re::Digest& dir, const std::string& under, std::string& out) {
  re::Directory d;
  if (!load(dir, d)) return;
  for (const auto& f : d.files()) out += " " + under + f.name();
  for (const auto& sub : d.directories()) input_names(sub.digest(), under + sub.name() + "/", out);
}

class CapabilitiesService final : public re::Capabilities::Service {
  grpc::Status GetCapabilities(grpc::ServerContext* ctx, const re::GetCapabilitiesRequest*,
                               re::ServerCapabilities* caps) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    say("GetCapabilities");
    caps->mutable_execution_capabilities()->set_exec_enabled(true);
    caps->mutable_execution_capabilities()->set_digest_function(re::DigestFunction::SHA256);
    caps->mutable_cache_capabilities()->add_digest_function(re::DigestFunction::SHA256);
    caps->mutable_cache_capabilities()->set_max_batch_total_size_bytes(4 << 20);
    if (stores())
      caps->mutable_cache_capabilities()->mutable_action_cache_update_capabilities()->set_update_enabled(true);
    caps->mutable_low_api_version()->set_major(2);
    caps->mutable_high_api_version()->set_major(2);
    return grpc::Status::OK;
  }
};

class CasService final : public re::ContentAddressableStorage::Service {
  grpc::Status FindMissingBlobs(grpc::ServerContext* ctx, const re::FindMissingBlobsRequest* req,
                                re::FindMissingBlobsResponse* resp) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    say("FindMissingBlobs " + mnemonic(ctx));
    if (mode != "slow-failing") dawdle();
    std::string ignored;
    for (const auto& d : req->blob_digests())
      if (!store.get(d.hash(), ignored)) *resp->add_missing_blob_digests() = d;
    return grpc::Status::OK;
  }
  grpc::Status BatchUpdateBlobs(grpc::ServerContext* ctx, const re::BatchUpdateBlobsRequest* req,
                                re::BatchUpdateBlobsResponse* resp) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    say("BatchUpdateBlobs " + mnemonic(ctx));
    if (mode == "slow") dawdle();
    for (const auto& r : req->requests()) {
      store.put(r.digest().hash(), r.data());
      auto* out = resp->add_responses();
      *out->mutable_digest() = r.digest();
    }
    return grpc::Status::OK;
  }
  // What the store holds under each hash (a lie under bad-digest, as ByteStream Read's).
  grpc::Status BatchReadBlobs(grpc::ServerContext* ctx, const re::BatchReadBlobsRequest* req,
                              re::BatchReadBlobsResponse* resp) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    say("BatchReadBlobs " + std::to_string(req->digests_size()));
    for (const auto& d : req->digests()) {
      auto* out = resp->add_responses();
      *out->mutable_digest() = d;
      if (!store.get(d.hash(), *out->mutable_data())) out->mutable_status()->set_code(int(grpc::StatusCode::NOT_FOUND));
    }
    return grpc::Status::OK;
  }
};

class ByteStreamService final : public bs::ByteStream::Service {
  grpc::Status Read(grpc::ServerContext* ctx, const bs::ReadRequest* req,
                    grpc::ServerWriter<bs::ReadResponse>* writer) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    // [INSTANCE/]blobs/HASH/SIZE
    const std::string& name = req->resource_name();
    const size_t at = name.find("blobs/");
    const std::string hash = at == std::string::npos ? "" : name.substr(at + 6, 64);
    say("ByteStream Read " + hash);
    std::string stored;
    const bool big = mode == "bloated" && hash == big_digest().hash();
    if (!big && !store.get(hash, stored)) return {grpc::StatusCode::NOT_FOUND, "no blob " + hash};
    const std::string& data = big ? big_blob() : stored;
    size_t sent = 0;
    do {  // in 1 MiB chunks, as engines send them
      bs::ReadResponse chunk;
      chunk.set_data(data.substr(sent, size_t(1) << 20));
      sent += chunk.data().size();
      if (!writer->Write(chunk)) break;
    } while (sent < data.size());
    return grpc::Status::OK;
  }
  grpc::Status Write(grpc::ServerContext* ctx, grpc::ServerReader<bs::WriteRequest>* reader,
                     bs::WriteResponse* resp) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    bs::WriteRequest req;
    std::string name, data;
    while (reader->Read(&req)) {
      if (!req.resource_name().empty()) name = req.resource_name();
      data += req.data();
    }
    const size_t at = name.find("/blobs/");
    if (at == std::string::npos) return {grpc::StatusCode::INVALID_ARGUMENT, "bad resource name " + name};
    store.put(name.substr(at + 7, 64), data);
    resp->set_committed_size(int64_t(data.size()));
    return grpc::Status::OK;
  }
};

class ActionCacheService final : public re::ActionCache::Service {
  grpc::Status GetActionResult(grpc::ServerContext* ctx, const re::GetActionResultRequest* req,
                               re::ActionResult* result) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    say("GetActionResult " + mnemonic(ctx));
    dawdle();
    if (mode == "slow-failing" || mode == "slow-execute") return {grpc::StatusCode::NOT_FOUND, "not in the action cache"};
    if (mode == "bloated") {  // an action's result comes from Execute (the compiler check's true)
      *result = bloated_result(mnemonic(ctx), {req->inline_output_files().begin(), req->inline_output_files().end()});
      if (result->exit_code() != 0) return {grpc::StatusCode::NOT_FOUND, "not in the action cache"};
      say("GetActionResult bloated");
      return grpc::Status::OK;
    }
    if (stores()) {
      std::lock_guard lock(results_m);
      auto it = results.find(req->action_digest().hash());
      if (it == results.end() && mode == "forging" && mnemonic(ctx) == "dependency-manifest") {
        *result = forged_manifest();
        say("GetActionResult forged manifest");
        return grpc::Status::OK;
      }
      if (it == results.end()) return {grpc::StatusCode::NOT_FOUND, "not in the action cache"};
      *result = it->second;
      say("GetActionResult stored");
      return grpc::Status::OK;
    }
    re::Action action;
    re::Command command;
    if (!load(req->action_digest(), action) || !load(action.command_digest(), command))
      return {grpc::StatusCode::NOT_FOUND, "not in the action cache"};
    say("GetActionResult lied");
    *result = lie(command);
    return grpc::Status::OK;
  }
  grpc::Status UpdateActionResult(grpc::ServerContext* ctx, const re::UpdateActionResultRequest* req,
                                  re::ActionResult* stored) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    if (!stores()) return {grpc::StatusCode::PERMISSION_DENIED, "update_enabled is false"};
    for (const auto& f : req->action_result().output_files())
      if (!f.contents().empty() && mode != "forging" && mode != "bloated") {
        say("UpdateActionResult refused inline contents");
        return {grpc::StatusCode::INVALID_ARGUMENT, "output files may not carry inline contents"};
      }
    say("UpdateActionResult");
    if (mode == "bloated") return grpc::Status::OK;  // kept nowhere
    std::lock_guard lock(results_m);
    results[req->action_digest().hash()] = req->action_result();
    *stored = req->action_result();
    return grpc::Status::OK;
  }
};

class ExecutionService final : public re::Execution::Service {
  grpc::Status Execute(grpc::ServerContext* ctx, const re::ExecuteRequest* req,
                       grpc::ServerWriter<google::longrunning::Operation>* writer) override {
    if (auto s = check_metadata(ctx); !s.ok()) return s;
    re::Action action;
    re::Command command;
    if (!load(req->action_digest(), action) || !load(action.command_digest(), command))
      return {grpc::StatusCode::FAILED_PRECONDITION, "the action or its command is not in the CAS"};
    re::ExecuteResponse response;
    std::vector<std::string> argv(command.arguments().begin(), command.arguments().end());
    if (argv.size() == 2 && argv[1] == "--version") {
      // The compiler check: answered truly, so that the build goes on to send its compiles.
      std::string out;
      response.mutable_result()->set_exit_code(run_here(argv, out));
      if (mode == "other-compiler") out = "clang version 99.0.0 (another worker's)\n";
      response.mutable_result()->set_stdout_raw(out);
      say("Execute compiler check " + argv[0]);
    } else if (mode == "evicting" && evict_once(req->action_digest(), action)) {
      response.mutable_status()->set_code(int(grpc::StatusCode::FAILED_PRECONDITION));
      response.mutable_status()->set_message("an input is missing from the CAS");
      say("Execute evicted");
    } else if (mode == "forging") {
      std::string names;
      input_names(action.input_root_digest(), "", names);
      response.mutable_result()->set_exit_code(1);
      say("Execute inputs" + names);
    } else if (mode == "bloated") {
      *response.mutable_result() = bloated_result("", {});
      say("Execute bloated");
    } else if (mode == "slow-execute") {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      response.mutable_result()->set_exit_code(1);
      response.mutable_result()->set_stderr_raw("error: failed on the worker\n");
      say("Execute failed slowly");
    } else if (mode == "slow-failing" || stores()) {
      response.mutable_result()->set_exit_code(1);
      response.mutable_result()->set_stderr_raw("error: failed on the worker\n");
      say("Execute failed");
    } else {
      *response.mutable_result() = lie(command);
      say("Execute lied");
    }
    google::longrunning::Operation op;
    op.set_name("operations/" + req->action_digest().hash());
    op.set_done(true);
    op.mutable_response()->PackFrom(response);
    writer->Write(op);
    return grpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string port;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0) port = argv[i + 1];
    else if (std::strcmp(argv[i], "--mode") == 0) mode = argv[i + 1];
    else if (std::strcmp(argv[i], "--delay-ms") == 0) delay_ms = std::atoi(argv[i + 1]);
  }
  if (port.empty() ||
      (mode != "bad-digest" && mode != "missing" && mode != "oversized" && mode != "other-compiler" &&
       mode != "slow" && mode != "slow-failing" && mode != "slow-execute" && mode != "strict-store" &&
       mode != "evicting" && mode != "forging" && mode != "bloated")) {
    std::cerr << "usage: ob_fake_reapi --port PORT --mode bad-digest|missing|oversized|other-compiler|slow|slow-failing|"
                 "slow-execute|strict-store|evicting|forging|bloated [--delay-ms N]\n";
    return 2;
  }
  CapabilitiesService capabilities;
  CasService cas;
  ByteStreamService bytestream;
  ActionCacheService action_cache;
  ExecutionService execution;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + port, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(64 << 20);
  for (grpc::Service* s : std::initializer_list<grpc::Service*>{&capabilities, &cas, &bytestream, &action_cache,
                                                                &execution})
    builder.RegisterService(s);
  auto server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "ob_fake_reapi: cannot listen on 127.0.0.1:" << port << "\n";
    return 1;
  }
  say("listening on 127.0.0.1:" + port + " mode " + mode);
  server->Wait();
}
