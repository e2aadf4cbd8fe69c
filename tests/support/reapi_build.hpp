// Builds with remote execution, for its tests (test_remote_execution.cpp
// against Bazel's worker, test_remote_faults.cpp against an engine that lies):
// the build, its objects (compared with a local build's), the cache counters,
// and what examples/vector-cxx prints when it ran offloaded.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/ob_process.hpp"

namespace ob::test {

inline const Env kMandatory = {{"OMP_TARGET_OFFLOAD", "MANDATORY"}};
inline const char* kExpected =
    "vector-cxx: n=100000\n"
    "axpy<float>: y[10]=21.0 y[n-1]=199999.0 mismatches=0 OK\n"
    "axpy<double>: y[10]=21.0 y[n-1]=199999.0 mismatches=0 OK\n"
    "dot<double>: sum=149850005.0 expected=149850005.0 OK\n"
    "launches=3 on_device=yes\n"
    "vector-cxx: all OK\n";

// Every object, IR file and package of a manifest build, by path.
inline std::map<std::string, std::string> objects(const fs::path& build) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(build / "obj")) {
    const std::string ext = e.path().extension().string();
    if (ext == ".o" || ext == ".bc" || ext == ".offload") out[fs::relative(e.path(), build).string()] = read_file(e.path());
  }
  return out;
}

inline process::Captured build(const fs::path& project, const fs::path& cache, std::vector<std::string> more = {}) {
  more.insert(more.begin(), "-j2");
  return build_project(project, cache, std::move(more));
}

// The reference: `project` built here with no cache; its objects, and in
// `program` the bytes of build/`name`; the build directory removed.
inline std::map<std::string, std::string> local_reference(const fs::path& project, const fs::path& cache,
                                                          const std::string& name = "", std::string* program = nullptr) {
  auto local = build(project, cache, {"--no-cache"});
  INFO(local.err);
  REQUIRE(local.exit_code == 0);
  auto expected = objects(project / "build");
  if (program) *program = read_file(project / "build" / name);
  fs::remove_all(project / "build");
  return expected;
}

inline uint64_t stat_of(const fs::path& cache, const char* field) {
  auto r = run_ob({"--cache-dir", cache.string(), "cache", "stats", "--json"});
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out).value(field, uint64_t(0));
}

// Entries the engine's action cache served as a layer of the local cache
// (engine_storage), from `cache stats`.
inline uint64_t engine_layer_hits(const fs::path& cache) {
  auto r = run_ob({"--cache-dir", cache.string(), "cache", "stats", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto remotes = nlohmann::json::parse(r.out).value("remotes", nlohmann::json::object());
  uint64_t hits = 0;
  for (const auto& [name, remote] : remotes.items())
    if (name.ends_with(" (action cache)")) hits += remote.value("hits", uint64_t(0));
  return hits;
}

}  // namespace ob::test
