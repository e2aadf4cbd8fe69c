// Failure paths, dry-run and interruption of the real pipeline.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>
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
  // The first step that parses the source: the single-parse host-IR job.
  CHECK_THAT(r.err, Catch::Contains("offload-build: error: host-ir src/reduce.cpp failed"));
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
  // 3 TUs x (host-ir + device + package + host) + link, plus cd and mkdir.
  CHECK(count_occurrences(r.out, "\n") == 3 * 4 + 1 + 2);
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
  // The driver is asked once how it would compile the device pass...
  CHECK(count_occurrences(r.err, "--offload-device-only -O2 -MD -MF build/obj/saxpy.c.dev.host.d "
                                 "-c saxpy.c -o build/obj/saxpy.c.dev.host.o '-###'") == 1);
  CHECK_THAT(r.err, Catch::Contains("offload-build: single-parse C/C++ pipeline for 1 of 1 "
                                    "translation units (1 driver probe)"));
  // ...then the host parse runs once and both the device cc1 and the host codegen read it.
  CHECK(count_occurrences(r.err, "--offload-host-only -emit-llvm -Xclang -disable-llvm-passes") == 1);
  CHECK(count_occurrences(r.err, "/usr/lib/llvm-22/bin/clang -cc1 -triple x86_64-unknown-linux-gnu") == 1);
  CHECK(count_occurrences(r.err, "-fopenmp-is-target-device -fopenmp-host-ir-file-path "
                                 "build/obj/saxpy.c.host.bc") == 1);
  CHECK(count_occurrences(r.err, "-c -x ir build/obj/saxpy.c.host.bc -o build/obj/.saxpy.c.host.o") == 1);
  CHECK(count_occurrences(r.err, "/usr/lib/llvm-22/bin/llvm-offload-binary -o") == 1);

  // The driver's answer is remembered next to the cache: a rebuild does not ask again.
  fs::remove_all(dir / "build");
  auto again = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "-v", "build"});
  REQUIRE(again.exit_code == 0);
  CHECK(count_occurrences(again.err, "'-###'") == 0);
  CHECK_THAT(again.err, Catch::Contains("(1 driver probe)"));

  auto two = run_ob({"-C", dir.string(), "--no-cache", "--two-parse", "-v", "build"});
  REQUIRE(two.exit_code == 0);
  CHECK(count_occurrences(two.err, "'-###'") == 0);
  CHECK_THAT(two.err, Catch::Contains("two-parse C/C++ pipeline for every translation unit: --two-parse"));
  CHECK(count_occurrences(two.err, "/usr/lib/llvm-22/bin/clang -fopenmp") == 3);
  CHECK(count_occurrences(two.err, "-cc1") == 0);
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

namespace {

// A toolchain of shell scripts and a project of `sources` ("int a;") using it.
fs::path fake_toolchain_project(const fs::path& tmp, const std::string& script,
                                const std::vector<std::string>& sources) {
  const fs::path llvm = tmp / "llvm";
  for (const char* tool : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper"}) {
    write_file(llvm / "bin" / tool, script);
    fs::permissions(llvm / "bin" / tool, fs::perms::owner_all);
  }
  const fs::path dir = tmp / "proj";
  for (const auto& src : sources) write_file(dir / src, "int " + src.substr(0, 1) + ";\n");
  write_file(dir / "offload.json",
             R"({"name": "p", "sources": ["*.c"], "targets": ["host"], "toolchain": ")" +
                 llvm.string() + "\"}");
  return dir;
}

struct Stopped {
  int exit_code;
  std::string err;
};

// Start `args`, wait until `ready` says so (or 60 s: a bound on a hang, not
// reached when it works), send `sig`, wait for the exit. What the stopped
// build waits for is the test's: a wait it should not make hangs the test
// until CTest's TIMEOUT fails it.
Stopped stop_with(int sig, std::vector<std::string> args, const std::function<bool()>& ready) {
  int err_pipe[2];
  REQUIRE(pipe(err_pipe) == 0);
  args.insert(args.begin(), OB_BINARY);
  auto pid = process::spawn(process::Command{args, {}, {}}, process::Stdio{-1, -1, err_pipe[1]});
  close(err_pipe[1]);
  REQUIRE(pid.ok());
  for (int i = 0; i < 1200 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(*pid, sig);
  Stopped s{process::wait_exit_code(*pid), {}};
  char buf[4096];
  for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) > 0;) s.err.append(buf, n);
  close(err_pipe[0]);
  return s;
}

// The pids (one a line) the fake compilers appended to `file`.
std::vector<pid_t> pids_in(const fs::path& file) {
  std::vector<pid_t> out;
  std::istringstream in(read_file(file));
  for (long pid; in >> pid;) out.push_back(static_cast<pid_t>(pid));
  return out;
}

// Whether process `pid` still runs: /proc/PID/stat is there and says neither
// zombie (Z) nor dead (X).
bool still_running(pid_t pid) {
  std::ifstream proc("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(proc, text)) return false;
  const size_t paren = text.rfind(')');  // after the command's name, which may hold anything
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  return text[paren + 2] != 'Z' && text[paren + 2] != 'X';
}

}  // namespace

// A toolchain whose compiler writes part of its output, then hangs: the build
// is interrupted while jobs run, and must leave nothing behind. The compilers
// hang for longer than CTest's TIMEOUT (600 s): a build that waited them out
// instead of stopping them would not come back in time, and fail.
TEST_CASE("SIGINT and SIGTERM stop the children and remove partial outputs",
          "[integration][pipeline]") {
  for (int sig : {SIGTERM, SIGINT}) {
    TempDir tmp;
    const fs::path pids = tmp / "pids";  // each compiler's, once its partial output is written
    // Not clang: it refuses -### (so the build keeps the two-parse form), and
    // fails any other probe (the stable-names one writes to -): only the
    // build's jobs, writing temporaries, hang.
    const fs::path dir = fake_toolchain_project(
        tmp.path(),
        "#!/bin/sh\n"
        "for a; do [ \"$a\" = '-###' ] && exit 1; done\n"
        "out=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
        "case \"$out\" in *.ob-tmp-*) ;; *) exit 1 ;; esac\n"
        "echo partial > \"$out\"\necho $$ >> '" + pids.string() + "'\nexec sleep 1000\n",
        {"a.c", "b.c"});
    // Once both compilers (-j 2) have written their partial outputs.
    auto s = stop_with(sig, {"-C", dir.string(), "-j", "2", "build"},
                       [&] { return count_occurrences(read_file(pids), "\n") >= 2; });
    CHECK(s.exit_code == 130);
    CHECK_THAT(s.err, Catch::Contains("interrupted"));
    CHECK(temp_outputs(dir / "build").empty());
    CHECK_FALSE(fs::exists(dir / "build/obj/a.c.host.o"));
    // The children were stopped, not left running: neither compiler (its
    // shell exec'd sleep, same pid) is alive once the build has exited.
    const auto children = pids_in(pids);
    CHECK(children.size() == 2);
    for (pid_t child : children) {
      INFO("compiler pid " << child);
      CHECK_FALSE(still_running(child));
    }
  }
}

// The driver is asked how it would compile (clang -###) before any job runs:
// a compiler that hangs there must not make Ctrl-C wait. It hangs longer than
// CTest's TIMEOUT, so a build waiting it out fails the test; the probe's own
// 20 s limit would end it sooner, and say so (asserted absent below).
TEST_CASE("SIGINT while the driver is probed stops the build at once", "[integration][pipeline]") {
  TempDir tmp;
  const fs::path started = tmp / "started";  // made by the first tool run: the probe
  const fs::path dir = fake_toolchain_project(
      tmp.path(), "#!/bin/sh\n: > '" + started.string() + "'\nexec sleep 1000\n", {"a.c"});
  // -v: the planner says how the probe ended (its error, as the reason for
  // the two-parse form).
  auto s = stop_with(SIGINT, {"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "-v", "build"},
                     [&] { return fs::exists(started); });
  INFO(s.err);
  CHECK(s.exit_code == 130);
  CHECK_THAT(s.err, Catch::Contains("interrupted"));
  // The signal ended the probe, not the probe's own 20 s limit
  // (process::capture's "still running after 20 s: stopped").
  CHECK_THAT(s.err, !Catch::Contains("still running after"));
  CHECK_FALSE(fs::exists(dir / "build/p"));
  CHECK_FALSE(fs::exists(tmp / "cache/probes"));  // nothing remembered from a stopped probe
}
