// Launcher-mode integration tests' shared pieces: a per-test cache, running
// the compiler alone and through offload-build, and the byte-identity check.
#pragma once

#include <catch2/catch.hpp>

#include "support/cache_stats.hpp"

#include <nlohmann/json.hpp>

#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

namespace ob::test {

using Argv = std::vector<std::string>;

inline const std::string kClang = "/usr/bin/clang-22";
inline const std::string kClangxx = "/usr/bin/clang++-22";
inline const std::string kHostTargets = "-fopenmp-targets=x86_64-unknown-linux-gnu";

// A small offload kernel: a reduction in `int work(int n)`.
inline const std::string kWorkKernel = R"(int work(int n) {
  int s = 0;
#pragma omp target teams distribute parallel for reduction(+: s) map(tofrom: s)
  for (int i = 0; i < n; ++i) s += i % 3 == 0 ? i * 7 : -i;
  return s;
}
)";

// A per-test cache; OFFLOAD_BUILD_VERBOSE and friends unset.
struct Launcher {
  TempDir tmp{"ob-launch"};
  fs::path cache = tmp / "cache";
  Env env(Env more = {}) const {
    Env e{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
          {"OFFLOAD_BUILD_EXPLAIN", std::nullopt}, {"OFFLOAD_BUILD_DISABLE", std::nullopt},
          {"MAKEFLAGS", std::nullopt}};
    e.insert(e.end(), more.begin(), more.end());
    return e;
  }
  process::Captured ob(Argv args, Env more = {}) const { return run_ob(std::move(args), tmp.path(), env(more)); }
  process::Captured cc(Argv args, Env more = {}) const {
    return run_tool(std::move(args), tmp.path(), env(more));
  }
  nlohmann::json stats() const { return cache_stats(cache, env(), tmp.path()); }
};

inline Argv concat(Argv a, const Argv& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Compile with the compiler alone and through offload-build; both must give
// the same bytes, depfile, output and exit code, and offload-build must have
// split the compile (its passes missed the cache; nothing ran unchanged).
// `also`: other files the compile writes next to the object (ref.X / got.X).
// Returns what the compiler alone printed.
inline std::string expect_equivalent(const Launcher& l, const Argv& compile, const std::string& src,
                                     const std::vector<std::string>& also = {}) {
  INFO(util::shell_join(compile));
  const Argv got_args = concat(compile, {"-MD", "-MF", "got.d", "-MT", "obj.o", "-c", src, "-o", "got.o"});
  // Stable kernel names (docs/CACHE.md): the compiler alone, given the same
  // preloaded library and salt, names kernels as the split passes do.
  const Env names = stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, got_args)).out);
  REQUIRE(names.size() == 2);  // LD_PRELOAD and the salt: no base directory
  auto ref = l.cc(concat(compile, {"-MD", "-MF", "ref.d", "-MT", "obj.o", "-c", src, "-o", "ref.o"}), names);
  auto before = l.stats();
  auto got = l.ob(got_args);
  INFO(got.err);
  REQUIRE(ref.exit_code == 0);
  REQUIRE(got.exit_code == 0);
  auto after = l.stats();
  CHECK(after["misses"].get<int>() > before["misses"].get<int>());  // split, not run unchanged
  CHECK(after["unchanged_by_reason"] == before["unchanged_by_reason"]);
  CHECK(got.out == ref.out);
  CHECK(got.err == ref.err);
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));
  CHECK(read_file(l.tmp / "got.d") == read_file(l.tmp / "ref.d"));
  for (const auto& ext : also) {
    INFO(ext);
    REQUIRE(fs::exists(l.tmp / ("ref." + ext)));
    CHECK(read_file(l.tmp / ("got." + ext)) == read_file(l.tmp / ("ref." + ext)));
  }
  CHECK_FALSE(fs::exists(l.tmp / "got.o.offload-build"));  // the work directory is gone
  CHECK(temp_outputs(l.tmp.path()).empty());
  return ref.err;
}


}  // namespace ob::test
