// Failure paths, dry-run and interruption of the real pipeline.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

TEST_CASE("a compile error shows the compiler's diagnostic and fails the build",
          "[integration][pipeline]") {
  TempDir tmp;
  fs::path dir = copy_example("vector-cxx", tmp.path());
  std::string src = read_file(dir / "src/reduce.cpp");
  src += "\nint broken() { return undeclared_name_xyz; }\n";
  write_file(dir / "src/reduce.cpp", src);
  auto r = run_ob({"-C", dir.string(), "-j", "1", "build"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("src/reduce.cpp:") &&
                        Catch::Contains("error: use of undeclared identifier 'undeclared_name_xyz'"));
  CHECK_THAT(r.err, Catch::Contains("offload-build: error: device host src/reduce.cpp failed"));
  CHECK_FALSE(fs::exists(dir / "build/vector"));
  CHECK(temp_outputs(dir / "build").empty());
}

TEST_CASE("dry-run prints a script that bash runs into a working program",
          "[integration][pipeline]") {
  TempDir tmp;
  fs::path dir = copy_example("vector-cxx", tmp.path());
  auto r = run_ob({"-C", dir.string(), "--dry-run", "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(fs::exists(dir / "build"));  // nothing ran
  CHECK(r.out.rfind("cd ", 0) == 0);
  // 3 TUs x (device + package + host) + link, plus cd and mkdir.
  CHECK(count_occurrences(r.out, "\n") == 3 * 3 + 1 + 2);
  write_file(tmp / "script.sh", r.out);
  auto sh = run_tool({"bash", "-e", (tmp / "script.sh").string()});
  INFO(sh.err);
  REQUIRE(sh.exit_code == 0);
  auto prog = run_tool({(dir / "build/vector").string()}, dir, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  CHECK(prog.exit_code == 0);
  CHECK_THAT(prog.out, Catch::Contains("vector-cxx: all OK"));
}

TEST_CASE("verbose mode (-v) prints each command before it runs", "[integration][pipeline]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  auto r = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "-v", "build"});
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "/usr/lib/llvm-22/bin/clang -fopenmp") == 3);
  CHECK(count_occurrences(r.err, "/usr/lib/llvm-22/bin/llvm-offload-binary -o") == 1);
  CHECK_THAT(r.err, Catch::Contains("--offload-device-only"));
}

TEST_CASE("full OpenMP target regions for a GPU without device runtime fail plainly",
          "[integration][pipeline]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  auto r = run_ob({"-C", dir.string(), "--target", "sm_90", "build"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("saxpy.c: target sm_90 (nvptx64-nvidia-cuda) needs the OpenMP "
                                    "device runtime"));
  CHECK_THAT(r.err, Catch::Contains("ompx_bare"));
  CHECK(r.err.find("nvlink error") == std::string::npos);
  CHECK_FALSE(fs::exists(dir / "build/obj/saxpy.c.dev.sm_90.o"));
  CHECK_FALSE(fs::exists(dir / "build/saxpy"));
}

TEST_CASE("the target option overrides the manifest and builds only that target",
          "[integration][pipeline]") {
  TempDir tmp;
  fs::path dir = copy_example("bare-gpu", tmp.path());
  auto r = run_ob({"-C", dir.string(), "--target", "gfx90a", "--target", "host", "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir / "build/obj/bare.c.dev.gfx90a.o"));
  CHECK_FALSE(fs::exists(dir / "build/obj/bare.c.dev.sm_90.o"));
  auto listing = run_tool({std::string(kLlvmBin) + "/llvm-objdump", "--offloading",
                           (dir / "build/bare").string()});
  CHECK(count_occurrences(listing.out, "OFFLOADING IMAGE") == 2);
  CHECK(listing.out.find("sm_90") == std::string::npos);
}

TEST_CASE("a bad manifest is a usage error and builds nothing", "[integration][pipeline]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  write_file(dir / "offload.json",
             "{\n  \"name\": \"saxpy\",\n  \"sources\": [\"saxpy.c\"],\n  \"targets\": [\"sm90\"]\n}\n");
  auto r = run_ob({"-C", dir.string(), "build"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("offload.json:4:15: error:") &&
                        Catch::Contains("did you mean \"sm_90\"?"));
  CHECK_FALSE(fs::exists(dir / "build"));

  auto missing = run_ob({"-C", (tmp / "nowhere").string(), "build"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("no manifest at"));

  auto bad_option = run_ob({"build", "--frobnicate"});
  CHECK(bad_option.exit_code == 2);
  CHECK_THAT(bad_option.err, Catch::Contains("--frobnicate"));
}

// A toolchain whose compiler writes part of its output, then hangs: the build
// is interrupted while jobs run, and must leave nothing behind.
TEST_CASE("SIGINT and SIGTERM stop the children and remove partial outputs",
          "[integration][pipeline]") {
  for (int sig : {SIGTERM, SIGINT}) {
    TempDir tmp;
    fs::path llvm = tmp / "llvm";
    const std::string hanging = "#!/bin/sh\n"
                                "out=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                                "echo partial > \"$out\"\nexec sleep 30\n";
    for (const char* tool : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper"}) {
      write_file(llvm / "bin" / tool, hanging);
      fs::permissions(llvm / "bin" / tool, fs::perms::owner_all);
    }
    fs::path dir = tmp / "proj";
    write_file(dir / "a.c", "int a;\n");
    write_file(dir / "b.c", "int b;\n");
    write_file(dir / "offload.json",
               R"({"name": "p", "sources": ["*.c"], "targets": ["host"], "toolchain": ")" +
                   llvm.string() + "\"}");
    int err_pipe[2];
    REQUIRE(pipe(err_pipe) == 0);
    Command cmd{{OB_BINARY, "-C", dir.string(), "-j", "2", "build"}, {}, {}};
    auto pid = exec::spawn(cmd, exec::Stdio{-1, -1, err_pipe[1]});
    close(err_pipe[1]);
    REQUIRE(pid.ok());
    // Wait until both compilers have written their partial outputs.
    for (int i = 0; i < 100 && temp_outputs(dir / "build").size() < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(temp_outputs(dir / "build").size() == 2);
    auto started = std::chrono::steady_clock::now();
    kill(*pid, sig);
    int code = exec::wait_exit_code(*pid);
    auto waited = std::chrono::steady_clock::now() - started;
    std::string err;
    char buf[4096];
    for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) > 0;) err.append(buf, n);
    close(err_pipe[0]);
    CHECK(code == 130);
    CHECK_THAT(err, Catch::Contains("interrupted"));
    CHECK(temp_outputs(dir / "build").empty());
    CHECK_FALSE(fs::exists(dir / "build/obj/a.c.host.o"));
    CHECK(waited < std::chrono::seconds(10));  // children were stopped, not waited out
  }
}
