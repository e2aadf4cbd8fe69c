// `offload-build cache stats --json`, parsed: the cache's counters, as every
// test that counts hits and misses reads them.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ob_process.hpp"

namespace ob::test {

// The counters of `cache` (empty: the one `env` or the settings name), the
// command run in `cwd` with `env`; it must succeed.
inline nlohmann::json cache_stats(const fs::path& cache, Env env = {}, const fs::path& cwd = {}) {
  std::vector<std::string> args;
  if (!cache.empty()) args = {"--cache-dir", cache.string()};
  args.insert(args.end(), {"cache", "stats", "--json"});
  auto r = run_ob(args, cwd, std::move(env));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace ob::test
