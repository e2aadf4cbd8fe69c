// Builds with remote storage, for the remote storage tests: the build with
// --remote-storage and no remote from the environment, the cache counters,
// and redis-cli against a private server.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cache_stats.hpp"
#include "support/ob_process.hpp"
#include "support/servers.hpp"

namespace ob::test {

inline const std::string kPassword = "pw-s3cret-9f2";

// No remote from the environment unless a test sets one.
inline Env remote_env(Env more = {}) {
  Env e{{"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt}};
  e.insert(e.end(), more.begin(), more.end());
  return e;
}

inline process::Captured build(const fs::path& dir, const fs::path& cache, std::vector<std::string> remotes,
                     std::vector<std::string> extra = {}, Env env = {}) {
  std::vector<std::string> options;
  for (const auto& r : remotes) options.insert(options.end(), {"--remote-storage", r});
  options.insert(options.end(), extra.begin(), extra.end());
  if (std::find(extra.begin(), extra.end(), "run") == extra.end())
    return build_project(dir, cache, std::move(options), remote_env(env));
  options.insert(options.begin(), {"-C", dir.string(), "--cache-dir", cache.string()});  // `run`, not `build`
  return run_ob(std::move(options), {}, remote_env(env));
}


// The counters of the remote shown as `display`, zero when it has none.
inline nlohmann::json remote_stats(const fs::path& cache, const std::string& display) {
  auto s = cache_stats(cache);
  INFO(s.dump());
  if (!s["remotes"].contains(display)) return nlohmann::json::object();
  return s["remotes"][display];
}

inline uint64_t count_of(const nlohmann::json& j, const char* key) { return j.value(key, uint64_t{0}); }

inline std::string redis_cli(const RedisServer& s, std::vector<std::string> cmd,
                      const std::string& password = kPassword) {
  std::vector<std::string> argv{"/usr/bin/redis-cli", "--no-auth-warning"};
  if (s.port()) argv.insert(argv.end(), {"-h", "127.0.0.1", "-p", std::to_string(s.port())});
  else argv.insert(argv.end(), {"-s", s.socket().string()});
  if (!password.empty()) argv.insert(argv.end(), {"-a", password});
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return run_tool(argv).out;
}

inline int dbsize(const RedisServer& s, const std::string& password = kPassword) {
  return std::stoi("0" + redis_cli(s, {"DBSIZE"}, password));
}

}  // namespace ob::test
