// Remote execution engines by the scheme their URLs start with, as remote
// storage's backends are (storage/remote/backend_registry.hpp): each engine's
// file describes its schemes (`EngineScheme`: the URL's own part, how its
// client is opened) and the list in engine_registry.cpp names each engine
// once. What every engine shares (the `|attribute=value` suffixes, the
// redaction of credentials) is setting.cpp's; what the runner asks of
// a client is reapi::Client (exec/remote/client.hpp).
//
// Adding an engine: define `std::vector<EngineScheme> NAME_schemes()` in its
// file and add it to the list in engine_registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/exec/remote/client.hpp"
#include "offload_build/util/result.hpp"
#include "offload_build/util/scheme_registry.hpp"

namespace ob::exec {

struct EngineScheme {
  std::string prefix;  // what the URL starts with: "grpc://"
  std::string usage;   // its form, in "unsupported URL; use ...": "grpc://HOST:PORT"
  // What follows `prefix` into `endpoint` (target, tls): nullopt, or why not.
  std::function<std::optional<std::string>(std::string_view rest, reapi::Endpoint& endpoint)> parse_address;
  // A client for `endpoint` (loading what it needs on first use), or an error
  // (a usage error: the engine's client cannot be had at all).
  std::function<Result<std::unique_ptr<reapi::Client>>(const reapi::Endpoint& endpoint)> open;
};

class EngineRegistry : public util::SchemeRegistry<EngineScheme> {
 public:
  // The engines offload-build knows (REAPI over gRPC): the one every caller uses.
  static const EngineRegistry& builtin();
};

}  // namespace ob::exec
