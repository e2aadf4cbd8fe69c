// Hostile local files (issue 18, docs/RELIABILITY.md "Hostile inputs: local
// files"): a manifest, response file or depfile that is a symlink to
// /dev/zero or /dev/urandom, a FIFO or a huge file is refused at once with a
// message naming it, never read forever. Every run goes through `timeout` and
// `prlimit --as`, so a regression fails instead of hanging or filling memory:
// killed, it cannot exit 0 or 2 with the message. No test compares a time.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;
using Argv = std::vector<std::string>;

namespace {

// offload-build ARGS, killed after 60 s, with 4 GiB of address space at most
// (clang included). The kill is a bound on a hang (exit 137), not on speed:
// the tests assert the exit code and what was said.
process::Captured run_bounded(Argv args, const fs::path& cwd, Env env) {
  args.insert(args.begin(), {"timeout", "-s", "KILL", "60", "prlimit", "--as=4294967296", OB_BINARY});
  return run_tool(std::move(args), cwd, std::move(env));
}

}  // namespace

TEST_CASE("a manifest that is a device, a FIFO or too large is refused at once, exit 2",
          "[integration][hostile]") {
  TempDir tmp{"ob-hostile"};
  const fs::path dir = tmp / "proj";
  fs::create_directories(dir);
  const fs::path manifest = dir / "offload.json";
  std::string expected;
  SECTION("a symlink to /dev/zero") {
    fs::create_symlink("/dev/zero", manifest);
    expected = ": not a regular file (a character device); a manifest must be a regular file";
  }
  SECTION("a symlink to /dev/urandom") {
    fs::create_symlink("/dev/urandom", manifest);
    expected = ": not a regular file (a character device); a manifest must be a regular file";
  }
  SECTION("a FIFO") {
    REQUIRE(::mkfifo(manifest.c_str(), 0600) == 0);
    expected = ": not a regular file (a FIFO); a manifest must be a regular file";
  }
  SECTION("40 MiB") {
    write_file(manifest, "{");
    fs::resize_file(manifest, uint64_t{40} << 20);
    expected = " is 40.0 MiB; a manifest is at most 16.0 MiB";
  }
  auto r = run_bounded({"-C", dir.string(), "build"}, {}, {});
  INFO(r.out << r.err);
  // Refused before reading (the message is the one said before any read),
  // exit 2: not the kill (137) or the memory limit a read of the file hits.
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(manifest.string() + expected));
}

TEST_CASE("launcher: a response file that is /dev/zero or a FIFO runs the compiler unchanged, "
          "said once",
          "[integration][hostile][launcher]") {
  TempDir tmp{"ob-hostile"};
  write_file(tmp / "k.c", "int k(void) { return 1; }\n");
  const Env env{{"OFFLOAD_BUILD_VERBOSE", "1"}, {"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()}};
  std::string rsp, expected;
  SECTION("a response file naming itself (item 11: the reason once, not twice)") {
    write_file(tmp / "loop.rsp", "@loop.rsp\n");
    rsp = "loop.rsp";
    expected = "names response files more than 20 deep";
  }
  SECTION("a symlink to /dev/zero") {
    fs::create_symlink("/dev/zero", tmp / "zero.rsp");
    rsp = "zero.rsp";
    expected = "zero.rsp: not a regular file (a character device); a response file must be a regular file";
  }
  SECTION("a FIFO") {
    REQUIRE(::mkfifo((tmp / "fifo.rsp").c_str(), 0600) == 0);
    rsp = "fifo.rsp";
    expected = "fifo.rsp: not a regular file (a FIFO); a response file must be a regular file";
  }
  // --dry-run: the compiler run unchanged would read the file itself (clang
  // blocks on the FIFO too); only offload-build's handling is under test.
  auto r = run_bounded({"-v", "--dry-run", "wrap", "--", "/usr/bin/clang-22", "-fopenmp", "-c", "@" + rsp,
                        "k.c", "-o", "k.o"},
                       tmp.path(), env);
  INFO(r.err);
  CHECK(r.exit_code == 0);  // not the kill (137) that a blocked or endless read meets
  CHECK(count_occurrences(r.err, "a response file cannot be read") == 1);
  CHECK_THAT(r.err, Catch::Contains(expected));
}

TEST_CASE("a depfile that is a symlink to /dev/zero is not read: nothing stored, the build is fine",
          "[integration][hostile]") {
  TempDir tmp{"ob-hostile"};
  const fs::path dir = copy_example("saxpy-c", tmp.path());
  // A clang that replaces the depfile it wrote (-MF FILE) with a symlink to /dev/zero.
  use_wrapped_clang(dir, tmp / "llvm", [](const std::string& tool) {
    return std::string("#!/bin/sh\n") + kLlvmBin + "/" + tool +
           " \"$@\" || exit $?\n"
           "dep=; prev=\nfor a in \"$@\"; do [ \"$prev\" = -MF ] && dep=$a; prev=$a; done\n"
           "[ -n \"$dep\" ] && rm -f \"$dep\" && ln -s /dev/zero \"$dep\"\nexit 0\n";
  });
  const fs::path cache = tmp / "cache";
  auto r = run_bounded({"-C", dir.string(), "--cache-dir", cache.string(), "build"}, {}, {});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);  // not the kill (137) or the memory limit that reading /dev/zero meets
  auto stats = nlohmann::json::parse(run_ob({"--cache-dir", cache.string(), "cache", "stats", "--json"}).out);
  INFO(stats.dump());
  CHECK(stats["misses_by_reason"]["depfile unreadable"].get<int>() >= 1);
  auto p = run_tool({(dir / "build/saxpy").string()}, dir, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  CHECK_THAT(p.out, Catch::Contains("max_err=0 OK"));
}

// clang 22 with the -MD a manifest build gives every compile exits 0 and
// embeds nothing when an #embed names a missing file (no depfile either):
// the build fails naming why, and nothing is stored.
TEST_CASE("a manifest build with an #embed of a missing file fails, and caches nothing", "[integration][hostile]") {
  TempDir tmp("ob-embed-missing");
  const fs::path dir = tmp / "p";
  write_file(dir / "k.c", "#include <stdio.h>\nstatic const char d[] = {\n#embed \"missing.bin\"\n};\n"
                          "int main(void) {\n  printf(\"%zu\\n\", sizeof d);\n  return 0;\n}\n");
  write_file(dir / "offload.json",
             R"({"name": "k", "sources": ["k.c"], "targets": ["host"], "flags": ["-std=c23"]})");
  auto r = build_project(dir, tmp / "cache");
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("exited 0 but wrote no dependency file"));
  CHECK_FALSE(fs::exists(dir / "build/k"));
  auto stats = run_ob({"--cache-dir", (tmp / "cache").string(), "cache", "stats", "--json"});
  REQUIRE(stats.exit_code == 0);
  CHECK(nlohmann::json::parse(stats.out).value("stores", 0) == 0);
}
