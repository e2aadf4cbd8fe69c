// README.md's first steps, as a new user types them (issue 20): install into
// ~/.local, the "Using it" commands, a new project with `init`, a CMake
// project, a cargo crate. Each command must be a line of a README code block,
// word for word (a README that changes fails here until the test follows), and
// runs through bash as typed, in a temporary directory with a private HOME
// (so ~/.local and the default cache ~/.cache/offload-build are the test's).
// Not run: the Install section's configure and build of build-release (the
// test installs the tree it was built in, linked as build-release) and
// scripts/demo.sh (a build of offload-build itself).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <regex>
#include <set>

#include "offload_build/util/strings.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// The command lines of README.md's code blocks: continuation lines joined,
// comments ("  # ...") dropped.
std::set<std::string> readme_commands() {
  std::set<std::string> out;
  bool in_block = false;
  std::string pending;
  static const std::regex comment(R"(\s+#\s.*$)");
  for (std::string line : util::split(read_file(fs::path(OB_SOURCE_DIR) / "README.md"), '\n')) {
    if (util::starts_with(line, "```")) {
      in_block = !in_block;
      continue;
    }
    if (!in_block) continue;
    line = util::trim(std::regex_replace(line, comment, ""));
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1);
      continue;
    }
    out.insert(pending + line);
    pending.clear();
  }
  return out;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

struct Walk {
  TempDir tmp{"ob-readme"};
  fs::path home = tmp / "home";
  fs::path work = tmp / "work";  // the clone: the examples, and build-release
  Env env;

  Walk() {
    fs::create_directories(home);
    fs::create_directories(work / "examples");
    // The tree this test was built in stands for the README's build-release.
    fs::create_directory_symlink(fs::path(OB_BINARY).parent_path(), work / "build-release");
    const std::string real_home = env_or("HOME", "/root");
    env = {{"HOME", home.string()},
           {"PATH", (home / ".local/bin").string() + ":" + env_or("PATH", "/usr/bin:/bin")},
           {"OFFLOAD_BUILD_CACHE_DIR", std::nullopt},  // the default: ~/.cache/offload-build
           {"XDG_CACHE_HOME", std::nullopt},
           {"CI", "1"},  // progress as plain lines
           {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
           {"OFFLOAD_BUILD_BASE_DIR", std::nullopt},
           {"MAKEFLAGS", std::nullopt},
           {"CMAKE_GENERATOR", std::nullopt},
           // rustup's nightly stays where it is installed
           {"RUSTUP_HOME", env_or("RUSTUP_HOME", real_home + "/.rustup")},
           {"CARGO_HOME", env_or("CARGO_HOME", real_home + "/.cargo")}};
    // Install (README "Install", its third line).
    auto installed = step("cmake --install build-release --prefix ~/.local && export PATH=\"$HOME/.local/bin:$PATH\"");
    REQUIRE(installed.exit_code == 0);
    for (const char* f : {"bin/offload-build", "bin/cargo-offload", "lib/offload-build/libob-stable-names.so",
                          "share/offload-build/templates/clang22-offload-toolchain.cmake"})
      CHECK(fs::exists(home / ".local" / f));
  }

  // Run README line `command` as typed, through bash, in `dir` (under work).
  process::Captured step(const std::string& command, const std::string& dir = "") {
    static const std::set<std::string> readme = readme_commands();
    INFO("README.md no longer has this command in a code block: " << command);
    REQUIRE(readme.count(command) == 1);
    auto r = run_tool({"bash", "-c", command}, work / dir, env);
    UNSCOPED_INFO("$ " << command << "\n" << r.out << r.err);
    return r;
  }
};

const std::regex kSummary(R"(offload-build: (\d+) jobs: \d+ from cache, \d+ run(, \d+ up to date)? in \d+\.\d\d s\n$)");

}  // namespace

TEST_CASE("README walk-through: install, build, run --verify, dry run, timings, doctor, init", "[readme][integration]") {
  Walk w;
  for (const char* example : {"saxpy-c", "vector-cxx"}) copy_example(example, w.work / "examples");
  auto build = w.step("offload-build -C examples/saxpy-c build");
  CHECK(build.exit_code == 0);
  CHECK(std::regex_search(build.err, kSummary));
  CHECK(fs::exists(w.work / "examples/saxpy-c/build/saxpy"));
  CHECK(fs::is_directory(w.home / ".cache/offload-build"));  // the default cache

  auto verify = w.step("offload-build -C examples/saxpy-c run --verify");
  CHECK(verify.exit_code == 0);
  CHECK_THAT(verify.out, Catch::Contains("max_err=0 OK"));
  CHECK_THAT(verify.err, Catch::Contains("offload-build: 5 jobs: 0 from cache, 0 run, 5 up to date in "));
  CHECK_THAT(verify.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch on device 0"));

  // "re-runnable commands": the script builds the program with the installed library.
  auto dry = w.step("offload-build -C examples/vector-cxx --dry-run build > build.sh");
  CHECK(dry.exit_code == 0);
  const std::string script = read_file(w.work / "build.sh");
  CHECK_THAT(script, Catch::Contains("LD_PRELOAD=" + (w.home / ".local/lib/offload-build/libob-stable-names.so").string()));
  CHECK_FALSE(fs::exists(w.work / "examples/vector-cxx/build/vector"));
  CHECK(run_tool({"bash", "build.sh"}, w.work, w.env).exit_code == 0);
  CHECK(run_tool({(w.work / "examples/vector-cxx/build/vector").string()}, w.work,
                 {{"OMP_TARGET_OFFLOAD", "MANDATORY"}}).exit_code == 0);

  auto timings = w.step("offload-build -C examples/vector-cxx --timings build");
  CHECK(timings.exit_code == 0);
  const fs::path page = w.work / "examples/vector-cxx/build/offload-build-timings.html";
  CHECK_THAT(timings.err, Catch::EndsWith("offload-build: timings: " + page.string() + "\n"));
  CHECK(fs::exists(page));

  auto doctor = w.step("offload-build doctor");
  CHECK(doctor.exit_code == 0);
  CHECK_THAT(doctor.out, Catch::Contains("ok: the host-device pipeline can build and run here"));

  auto init = w.step("offload-build init --lang cxx my-app");
  CHECK(init.exit_code == 0);
  CHECK_THAT(init.out, Catch::Contains("offload-build -C my-app run --verify"));  // what it says to do next
  CHECK(fs::exists(w.work / "my-app/offload.json"));
  auto app = w.step("offload-build -C my-app run --verify");
  CHECK(app.exit_code == 0);
  CHECK_THAT(app.out, Catch::Contains("on_device=yes OK"));
  CHECK_THAT(app.err, Catch::Contains("offload-build: verify: offload: 2 kernel launches on device 0"));
}

TEST_CASE("README walk-through: the sm_90 build of bare-gpu", "[readme][integration]") {
  if (access("/usr/local/cuda/bin/ptxas", X_OK) != 0)
    OB_SKIP("no CUDA ptxas at /usr/local/cuda/bin/ptxas for the README's sm_90 build");
  Walk w;
  copy_example("bare-gpu", w.work / "examples");
  auto r = w.step("offload-build -C examples/bare-gpu --target sm_90 build");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("] assemble sm_90 bare.c"));
  CHECK(std::regex_search(r.err, kSummary));
  CHECK(fs::exists(w.work / "examples/bare-gpu/build/bare"));
}

TEST_CASE("README walk-through: a CMake project with the installed package and toolchain file",
          "[readme][cmake][integration]") {
  Walk w;
  copy_example("cmake-project", w.work / "examples");
  CHECK(w.step("cmake --install build-release --prefix ~/.local").exit_code == 0);
  auto configure = w.step("cmake -S . -B b -G Ninja -DCMAKE_PREFIX_PATH=~/.local "
                          "-DCMAKE_TOOLCHAIN_FILE=~/.local/share/offload-build/templates/clang22-offload-toolchain.cmake",
                          "examples/cmake-project");
  REQUIRE(configure.exit_code == 0);
  const fs::path dir = w.work / "examples/cmake-project";
  auto built = run_tool({"cmake", "--build", "b"}, dir, w.env);
  INFO(built.out << built.err);
  REQUIRE(built.exit_code == 0);
  auto verified = run_tool({(w.home / ".local/bin/offload-build").string(), "verify", "--", "b/vecdemo"}, dir, w.env);
  INFO(verified.err);
  CHECK(verified.exit_code == 0);
  CHECK_THAT(verified.out, Catch::Contains("bad=0 OK"));
  CHECK_THAT(verified.err, Catch::Contains("offload-build: verify: offload: 4 kernel launches on device 0"));
}

TEST_CASE("README walk-through: init --lang cargo and cargo run --verify", "[readme][integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  Walk w;
  auto init = w.step("offload-build init --lang cargo my-crate");
  CHECK(init.exit_code == 0);
  CHECK(fs::exists(w.work / "my-crate/Cargo.toml"));
  auto run = w.step("offload-build -C my-crate cargo run --verify");
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("mismatches=0 OK"));
  CHECK_THAT(run.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch on device 0"));
  CHECK(std::regex_search(run.err.substr(0, run.err.find("offload-build: verify")), kSummary));
}
