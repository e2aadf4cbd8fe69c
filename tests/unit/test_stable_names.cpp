// The stable-names formula (include/offload_build/toolchain/stable_names.h),
// shared by the preloaded library and the cache keys, and the place-free key
// behind --explain's "only its place differs" (src/cache/place.cpp).
#include <catch2/catch.hpp>

#include "support/skip.hpp"

#include <set>

#include "offload_build/cache/place.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/program_identity.hpp"
#include "offload_build/toolchain/stable_names.h"
#include "offload_build/toolchain/stable_names.hpp"

using namespace ob;

namespace {

std::string name(const std::string& real, const std::vector<fs::path>& bases, const fs::path& anchor) {
  return toolchain::stable_name_path(real, toolchain::NameRoots{bases, anchor});
}

}  // namespace

TEST_CASE("stable names: files under a base are named relative to the anchor, as ccache's base_dir",
          "[stable-names]") {
  // Two checkouts at different depths under one base: the same names.
  CHECK(name("/x/a/proj/src/k.c", {"/x"}, "/x/a/proj/build") == "../src/k.c");
  CHECK(name("/x/b/c/proj/src/k.c", {"/x"}, "/x/b/c/proj/build") == "../src/k.c");
  CHECK(name("/x/a/proj/build/gen/c.h", {"/x"}, "/x/a/proj/build") == "gen/c.h");
  // A build tree beside the sources.
  CHECK(name("/x/a/proj/src/k.c", {"/x/a/proj", "/x/a/build"}, "/x/a/build") == "../proj/src/k.c");
  // Not under any base (system headers): the absolute real path.
  CHECK(name("/usr/include/stdio.h", {"/x"}, "/x/a/proj/build") == "/usr/include/stdio.h");
  CHECK(name("/x/a/k.c", {}, "/x/a") == "/x/a/k.c");
  // A component is never cut in the middle: /x/ab is not under /x/a.
  CHECK(name("/x/ab/k.c", {"/x/a"}, "/x/a") == "/x/ab/k.c");
  CHECK(name("/x/ab/k.c", {"/x"}, "/x/a") == "../ab/k.c");
  // No anchor: relative to the base the file lies under (and trailing slashes ignored).
  CHECK(name("/x/a/src/k.c", {"/y", "/x/a/"}, "") == "src/k.c");
  // The root as base and anchor.
  CHECK(name("/x/k.c", {"/"}, "/") == "x/k.c");
  // A base whose path holds ':' cannot be passed to the library: left out of both.
  CHECK(name("/x:y/k.c", {"/x:y"}, "/x:y") == "/x:y/k.c");
  CHECK(toolchain::NameRoots{{"/a", "/b:c", "/d"}, "/a"}.bases_env() == "/a:/d");
}

TEST_CASE("stable names: different files of one project never share a name", "[stable-names]") {
  // One anchor (the project's build tree): distinct real paths, distinct
  // names, whichever directory each compile ran in.
  const std::vector<std::string> files = {"/p/src/a/k.c", "/p/src/b/k.c", "/p/k.c", "/p/build/k.c",
                                          "/p/build/src/a/k.c", "/q/src/a/k.c", "/usr/include/k.h",
                                          "/p/src/a/k.c.h", "/p/src/a"};
  std::set<std::string> names;
  for (const auto& f : files) names.insert(name(f, {"/p", "/q"}, "/p/build"));
  CHECK(names.size() == files.size());
  // Ids follow names and the salt: another namespace, another id.
  CHECK(ob_stable_id(toolchain::kernel_salt("p1").c_str(), "../src/k.c") !=
        ob_stable_id(toolchain::kernel_salt("p2").c_str(), "../src/k.c"));
}

TEST_CASE("place-free keys: the same job in a checkout elsewhere, and what --explain says",
          "[stable-names][cache]") {
  auto job_in = [](const std::string& root) {
    plan::Plan plan;
    plan.cwd = root + "/proj/build";
    plan::Job job;
    job.kind = plan::JobKind::HostIr;
    cache::JobKey key;
    key.tools = {"/usr/bin/clang-22 size=1 mtime=2"};
    key.argv = {"<tool0>", "-I" + root + "/proj/include", "-isystem", "/usr/include/x", "-c",
                root + "/proj/src/k.c", "--sysroot=" + root + "/sys", "-o", "<output0>"};
    key.env = {"CPATH unset"};
    key.inputs = {{root + "/proj/src/k.c", "ab12", 0, 0, root + "/proj/src/k.c"}};
    return std::tuple{plan, job, key};
  };
  auto [p1, j1, k1] = job_in("/home/u/a");
  auto [p2, j2, k2] = job_in("/home/u/b/c");
  CHECK(cache::place_free_key(p1, j1, k1) == cache::place_free_key(p2, j2, k2));
  // Other content, or another system path, is no place difference.
  auto k3 = k2;
  k3.inputs[0].sha256 = "cd34";
  CHECK(cache::place_free_key(p2, j2, k3) != cache::place_free_key(p1, j1, k1));
  auto k4 = k2;
  k4.argv[3] = "/usr/include/y";
  CHECK(cache::place_free_key(p2, j2, k4) != cache::place_free_key(p1, j1, k1));

  const auto said = cache::explain_place(cache::place_record(p1, k1), cache::place_record(p2, k2));
  REQUIRE(said);
  CHECK_THAT(*said, Catch::Contains("the same job was built in /home/u/a/proj/build") &&
                        Catch::Contains("(-I/home/u/b/c/proj/include here, -I/home/u/a/proj/include there)") &&
                        Catch::Contains("--base-dir /home/u "));
  // The same directory: not a place difference.
  CHECK_FALSE(cache::explain_place(cache::place_record(p1, k1), cache::place_record(p1, k1)));
  // A record round-trips through its entry; anything else is refused.
  auto back = cache::decode_place_meta(storage::Entry{cache::encode_place_meta(cache::place_record(p1, k1)), {}});
  REQUIRE(back);
  CHECK(back->argv == k1.argv);
  CHECK(back->tools == k1.tools);
  CHECK_FALSE(cache::decode_place_meta(storage::Entry{R"({"cwd": 1, "argv": [], "inputs": []})", {}}));
  CHECK_FALSE(cache::decode_place_meta(
      storage::Entry{R"({"cwd": "/", "tools": [1], "argv": [], "inputs": []})", {}}));
  CHECK_FALSE(cache::decode_place_meta(storage::Entry{"[]", {}}));

  // Another compiler, same place: the key is the same and --explain names both programs.
  auto k5 = k1;
  k5.tools = {"/usr/lib/llvm-21/bin/clang size=3 mtime=4 driver-mode=g++"};
  CHECK(cache::place_free_key(p1, j1, k5) == cache::place_free_key(p1, j1, k1));
  const auto compiler = cache::explain_place(cache::place_record(p1, k1), cache::place_record(p1, k5));
  REQUIRE(compiler);
  CHECK_THAT(*compiler, Catch::StartsWith("only its compiler differs") &&
                            Catch::Contains("(/usr/lib/llvm-21/bin/clang size=3 mtime=4 driver-mode=g++ here, "
                                            "/usr/bin/clang-22 size=1 mtime=2 there)"));
  // Both: both said.
  const auto both = cache::explain_place(cache::place_record(p1, k1), cache::place_record(p2, k5));
  REQUIRE(both);
  CHECK_THAT(*both, Catch::StartsWith("its place and its compiler differ"));
}

TEST_CASE("a program is known by what it is: its real path and driver mode, not its spelling",
          "[stable-names][cache]") {
  CHECK(toolchain::clang_cli::driver_mode("clang-22") == "gcc");
  CHECK(toolchain::clang_cli::driver_mode("/usr/bin/clang++-22") == "g++");
  CHECK(toolchain::clang_cli::driver_mode("x86_64-linux-gnu-clang++") == "g++");
  CHECK(toolchain::clang_cli::driver_mode("flang-22") == "flang");
  CHECK(toolchain::clang_cli::driver_mode("llvm-offload-binary") == "");
}

TEST_CASE("a program is one binary however it is reached, and clang and clang++ differ", "[stable-names][cache]") {
  if (!fs::exists("/usr/lib/llvm-22/bin/clang-22")) OB_SKIP("LLVM 22 is not installed (package clang-22)");
  CHECK(toolchain::program_identity("/usr/bin/clang-22") == toolchain::program_identity("/usr/lib/llvm-22/bin/clang-22"));
  CHECK(toolchain::program_identity("/usr/bin/clang++-22") == toolchain::program_identity("/usr/lib/llvm-22/bin/clang++"));
  CHECK(toolchain::program_identity("/usr/bin/clang++-22") != toolchain::program_identity("/usr/bin/clang-22"));
  CHECK(toolchain::program_path("clang-22").is_absolute());
  CHECK(toolchain::program_identity("clang-22") == toolchain::program_identity("/usr/bin/clang-22"));
}
