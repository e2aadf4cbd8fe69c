// The project's fake REAPI engine (tests/support/fake-reapi/) for the tests
// of remote execution against engines that lie or plant: started on
// 127.0.0.1 and a free port, stopped by its PID; and one make run of
// launcher compiles. Built only with the remote execution module (OB_FAKE_REAPI).
#pragma once
#ifdef OB_FAKE_REAPI
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "support/ob_process.hpp"
#include "support/servers.hpp"

namespace ob::test {

// The fake engine in `mode` (fake_reapi.cpp's list), its calls logged.
struct LyingEngine {
  int port = free_port();
  fs::path log;
  ServerProcess process;
  LyingEngine(const fs::path& dir, const std::string& mode, int delay_ms = 0)
      : log(dir / ("fake-reapi-" + mode + ".log")) {
    fs::create_directories(dir);
    std::vector<std::string> argv{OB_FAKE_REAPI, "--port", std::to_string(port), "--mode", mode};
    if (delay_ms > 0) argv.insert(argv.end(), {"--delay-ms", std::to_string(delay_ms)});
    process = ServerProcess(argv, log);
    if (!wait_until([&] { return can_connect_tcp(port); }, process))
      throw std::runtime_error("the fake REAPI engine did not start; see " + log.string());
  }
  std::string url() const { return "grpc://127.0.0.1:" + std::to_string(port); }
  std::string calls() const { return read_file(log); }
};

// One make run of launcher compiles in `dir` (children of this test process,
// as under make): a.c and b.c, each a target region returning `value`, and
// the environment that sends them to `url`.
struct MakeRun {
  fs::path dir;
  Env env;
  MakeRun(const fs::path& d, const std::string& url, int value, Env more = {}) : dir(d) {
    for (const char* name : {"a", "b"})
      write_file(dir / (std::string(name) + ".c"),
                 std::string("int ") + name + "(void) {\n  int v = 0;\n#pragma omp target map(from: v)\n  v = " +
                     std::to_string(value) + ";\n  return v;\n}\n");
    env = {{"OFFLOAD_BUILD_CACHE_DIR", (dir / "cache").string()},
           {"OFFLOAD_BUILD_REMOTE_EXECUTION", url},
           {"OFFLOAD_BUILD_BASE_DIR", dir.string()},
           {"OFFLOAD_BUILD_CONFIG", std::nullopt},
           {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
           {"MAKEFLAGS", std::nullopt}};
    env.insert(env.end(), more.begin(), more.end());
  }
  // `name`.c compiled through the launcher: what it printed on stderr.
  std::string compile(const std::string& name) const {
    auto r = run_ob({"/usr/bin/clang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", name + ".c",
                     "-o", name + ".o"},
                    dir, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(fs::exists(dir / (name + ".o")));
    return r.err;
  }
};

}  // namespace ob::test
#endif
