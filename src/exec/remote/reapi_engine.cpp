// The Remote Execution API v2 engine as offload-build registers it (compiled
// into the exec stage: src/CMakeLists.txt): grpc:// and grpcs:// URLs, its
// client this folder's module libob-remote-execution.so, opened with dlopen on first use.
#include <dlfcn.h>

#include <charconv>
#include <mutex>

#include <fmt/format.h>

#include "offload_build/exec/remote/engine_registry.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::exec {

namespace {

std::string reapi_sha256(const void* data, size_t size) {
  return storage::sha256_hex(std::string_view(static_cast<const char*>(data), size));
}

// The module, opened once per process.
struct Module {
  void* handle = nullptr;
  reapi::OpenFn open = nullptr;
};

Result<Module> load_module() {
  static Module module;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    auto path = toolchain::find_support_file(reapi::kModuleName);
    if (!path) {
      error = fmt::format("remote_execution: {} is not installed next to offload-build (build it with "
                          "libgrpc++-dev, protobuf-compiler-grpc and bazel-bootstrap-source installed: "
                          "scripts/setup.sh; docs/DISTRIBUTED.md)",
                          reapi::kModuleName);
      return;
    }
    module.handle = dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module.handle) {
      error = fmt::format("remote_execution: cannot load {}: {}", path->string(), dlerror());
      return;
    }
    module.open = reinterpret_cast<reapi::OpenFn>(dlsym(module.handle, reapi::kOpenSymbol));
    if (!module.open) error = fmt::format("remote_execution: {} has no {}", path->string(), reapi::kOpenSymbol);
  });
  if (!module.open) return Error::usage(error);
  return module;
}

// HOST:PORT after the scheme (no path, no credentials: those go in |header=).
std::optional<std::string> parse_host_port(std::string_view rest, reapi::Endpoint& endpoint) {
  while (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.empty() || rest.find('/') != std::string_view::npos || rest.find('@') != std::string_view::npos)
    return "want grpc://HOST:PORT (credentials go in |header=NAME:VALUE)";
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || rest.back() == ']') return "the port is missing (grpc://HOST:PORT)";
  long port = 0;
  std::string_view port_text = rest.substr(colon + 1);
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port <= 0 || port > 65535)
    return "the port is not a number from 1 to 65535";
  endpoint.target = std::string(rest);
  return std::nullopt;
}

Result<std::unique_ptr<reapi::Client>> open_reapi(const reapi::Endpoint& endpoint) {
  auto module = load_module();
  if (!module) return module.error();
  std::string error;
  std::unique_ptr<reapi::Client> client(module->open(&endpoint, &reapi_sha256, &error));
  if (!client) return Error::usage(fmt::format("remote_execution: {}", error));
  return client;
}

EngineScheme reapi_scheme(std::string prefix, bool tls) {
  EngineScheme s;
  s.prefix = prefix;
  s.usage = prefix + "HOST:PORT";
  s.parse_address = [tls](std::string_view rest, reapi::Endpoint& endpoint) {
    endpoint.tls = tls;
    return parse_host_port(rest, endpoint);
  };
  s.open = open_reapi;
  return s;
}

}  // namespace

std::vector<EngineScheme> reapi_schemes() { return {reapi_scheme("grpc://", false), reapi_scheme("grpcs://", true)}; }

}  // namespace ob::exec
