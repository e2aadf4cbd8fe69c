// An action as REAPI messages (reapi_messages.hpp).
#include "reapi_messages.hpp"
#include "reapi_budget.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <random>

namespace ob::reapi {

re::Digest digest_of(const std::string& data, Sha256Hex sha256) {
  re::Digest d;
  d.set_hash(sha256(data.data(), data.size()));
  d.set_size_bytes(int64_t(data.size()));
  return d;
}

Prepared prepare(const Action& action, Sha256Hex sha256) {
  Prepared p;
  struct Dir {
    std::map<std::string, const InputFile*> files;
    std::map<std::string, Dir> dirs;
  };
  Dir root;
  for (const auto& f : action.inputs) {
    Dir* d = &root;
    std::string_view rest = f.path;
    for (size_t slash; (slash = rest.find('/')) != std::string_view::npos; rest.remove_prefix(slash + 1))
      d = &d->dirs[std::string(rest.substr(0, slash))];
    d->files[std::string(rest)] = &f;
  }
  auto add = [&](std::string data) {
    re::Digest d = digest_of(data, sha256);
    p.blobs.emplace(d.hash(), std::make_pair(d, Blob{std::move(data), {}}));
    return d;
  };
  std::function<re::Digest(const Dir&)> tree = [&](const Dir& dir) {
    re::Directory msg;
    for (const auto& [name, sub] : dir.dirs) {
      auto* node = msg.add_directories();
      node->set_name(name);
      *node->mutable_digest() = tree(sub);
    }
    for (const auto& [name, f] : dir.files) {
      auto* node = msg.add_files();
      node->set_name(name);
      node->mutable_digest()->set_hash(f->digest.hash);
      node->mutable_digest()->set_size_bytes(f->digest.size);
      node->set_is_executable(f->executable);
      p.blobs.emplace(f->digest.hash, std::make_pair(node->digest(), Blob{{}, f->local}));
    }
    return add(msg.SerializeAsString());
  };
  const re::Digest root_digest = tree(root);
  re::Command command;
  for (const auto& a : action.argv) command.add_arguments(a);
  for (const auto& [k, v] : action.env) {
    auto* e = command.add_environment_variables();
    e->set_name(k);
    e->set_value(v);
  }
  for (const auto& o : action.output_files) command.add_output_files(o);
  command.set_working_directory(action.working_directory);
  re::Action a;
  *a.mutable_command_digest() = add(command.SerializeAsString());
  *a.mutable_input_root_digest() = root_digest;
  if (action.timeout_s > 0) a.mutable_timeout()->set_seconds(action.timeout_s);
  a.set_do_not_cache(action.do_not_cache);
  p.action_digest = add(a.SerializeAsString());
  p.action_key = p.action_digest.hash() + "/" + std::to_string(p.action_digest.size_bytes());
  return p;
}

std::string status_text(const grpc::Status& s) {
  static const char* names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
                                "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const int code = s.error_code();
  std::string text = code >= 0 && code <= 16 ? names[code] : std::to_string(code);
  if (!s.error_message().empty()) text += ": " + s.error_message().substr(0, 300);
  return text;
}

static double seconds_between(const google::protobuf::Timestamp& a, const google::protobuf::Timestamp& b) {
  if (a.seconds() == 0 || b.seconds() == 0) return 0;
  const double d = double(b.seconds() - a.seconds()) + double(b.nanos() - a.nanos()) / 1e9;
  return d > 0 ? d : 0;
}

void read_execution_metadata(const re::ExecutedActionMetadata& md, ActionResult& out) {
  out.worker = md.worker();
  out.queued_s = seconds_between(md.queued_timestamp(), md.worker_start_timestamp());
  out.executed_s = seconds_between(md.execution_start_timestamp(), md.execution_completed_timestamp());
}

int64_t reported_run_ms(const re::ActionResult& ar) {
  const auto& md = ar.execution_metadata();
  if (md.execution_start_timestamp().seconds() == 0 || md.execution_completed_timestamp().seconds() == 0) return -1;
  return int64_t(seconds_between(md.execution_start_timestamp(), md.execution_completed_timestamp()) * 1000);
}

bool blob_bytes(const Blob& blob, const re::Digest& d, Sha256Hex sha256, std::string& out, std::string& error) {
  if (blob.file.empty()) {
    out = blob.data;
    return true;
  }
  const int fd = ::open(blob.file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot read " + blob.file.string() + ": " + std::strerror(errno);
    return false;
  }
  out.clear();
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, size_t(n));
    if (int64_t(out.size()) > d.size_bytes()) break;
  }
  ::close(fd);
  if (int64_t(out.size()) != d.size_bytes() || sha256(out.data(), out.size()) != d.hash()) {
    error = blob.file.string() + " changed during the build";
    return false;
  }
  return true;
}

bool verify_blob(const re::Digest& d, const std::string& data, Sha256Hex sha256, std::string& error) {
  if (int64_t(data.size()) != d.size_bytes() || sha256(data.data(), data.size()) != d.hash()) {
    error = "a blob's content does not match its digest " + d.hash().substr(0, 16) + "...";
    return false;
  }
  return true;
}

Action value_action(const std::string& kind, const std::string& key) {
  Action a;
  a.argv = {"offload-build-" + kind, key};
  a.output_files = {kind};
  a.mnemonic = kind;
  a.target_id = key;
  return a;
}

Prepared prepare_value(const Action& value, const std::string& text, Sha256Hex sha256, re::Digest& blob) {
  Prepared p = prepare(value, sha256);
  blob = digest_of(text, sha256);
  if (!text.empty()) p.blobs[blob.hash()] = {blob, Blob{text, {}}};
  return p;
}

std::string read_resource(const std::string& instance, const re::Digest& d) {
  return (instance.empty() ? "" : instance + "/") + "blobs/" + d.hash() + "/" + std::to_string(d.size_bytes());
}

bool read_capabilities(const re::ServerCapabilities& caps, Capabilities& out, std::string& error) {
  const auto& exec = caps.execution_capabilities();
  out.exec_enabled = exec.exec_enabled();
  if (!out.exec_enabled) {
    error = "the engine does not execute actions (ExecutionCapabilities.exec_enabled is false)";
    return false;
  }
  if (exec.digest_function() != re::DigestFunction::SHA256) {
    error = "the engine's digest function is not SHA-256";
    return false;
  }
  out.update_enabled = caps.cache_capabilities().action_cache_update_capabilities().update_enabled();
  const int64_t batch = caps.cache_capabilities().max_batch_total_size_bytes();
  if (batch > 0) out.max_batch_bytes = std::min<int64_t>(batch, kMaxBatchBytes);  // answers stay under kMaxMessageBytes
  return true;
}

std::string upload_resource(const std::string& instance, const re::Digest& d) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "%08x-%04x-4%03x-8%03x-%012llx", rd(), rd() & 0xffff, rd() & 0xfff,
                rd() & 0xfff, (unsigned long long)(counter++));
  return (instance.empty() ? "" : instance + "/") + "uploads/" + uuid + "/blobs/" + d.hash() + "/" +
         std::to_string(d.size_bytes());
}

std::string request_metadata(const Endpoint& endpoint, const std::string& action_id, const Action* action) {
  re::RequestMetadata md;
  md.mutable_tool_details()->set_tool_name("offload-build");
  md.mutable_tool_details()->set_tool_version(endpoint.tool_version);
  md.set_action_id(action_id);
  md.set_tool_invocation_id(endpoint.invocation_id);
  md.set_correlated_invocations_id(endpoint.invocation_id);
  if (action) {
    md.set_action_mnemonic(action->mnemonic);
    md.set_target_id(action->target_id);
  }
  return md.SerializeAsString();
}

}  // namespace ob::reapi
