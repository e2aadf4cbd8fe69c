// The remote_execution and engine_cache settings (docs/DISTRIBUTED.md):
// `grpc://HOST:PORT` (or grpcs://) with `|attribute=value` suffixes:
// instance=NAME, jobs=N, connect-timeout, call-timeout, execution-timeout
// (250ms, 2s, 10m), max-output-size (256M), header=NAME:VALUE (repeatable;
// ${VAR} taken from the environment); the engine the URL names by its scheme
// (exec/remote/engine_registry.hpp), and the redaction of its credentials.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "offload_build/config/config.hpp"
#include "offload_build/exec/remote/client.hpp"
#include "offload_build/exec/remote/engine_registry.hpp"
#include "offload_build/util/result.hpp"

namespace ob::exec {

// The engine_cache setting: whom the engine's action cache is trusted as
// (any client of an engine may write it; docs/CACHE.md's trust model).
enum class EngineCache {
  Use,      // its results serve the build and the local cache, never remote storage
  Trusted,  // stored everywhere, signed into remote storage
  Execute,  // never asked: every action executes
  Off,      // executed with do_not_cache
};
std::optional<EngineCache> parse_engine_cache(std::string_view text);

struct RemoteExecutionConfig {
  const EngineScheme* scheme = nullptr;  // the engine the URL names (exec/remote/engine_registry.hpp)
  reapi::Endpoint endpoint;
  EngineCache engine_cache = EngineCache::Use;
  size_t jobs = 0;      // remote jobs at once; 0: 4 x the local CPUs
  std::string display;  // the URL with every header value as ***
};

Result<RemoteExecutionConfig> parse_remote_execution(std::string_view text);
// The same over another registry (tests, an engine outside the builtin list).
Result<RemoteExecutionConfig> parse_remote_execution(std::string_view text, const EngineRegistry& registry);
// Keep from every child (the compilers, the program `run` starts) the
// variables the remote_execution setting's headers name (${VAR}) and
// OFFLOAD_BUILD_REMOTE_EXECUTION itself (util/secrets.hpp). Before any child starts.
void hide_remote_execution_secrets(const config::Config& config);
// `text` with every header value replaced by ***, also when it does not parse.
std::string redact_remote_execution(std::string_view text);

}  // namespace ob::exec
