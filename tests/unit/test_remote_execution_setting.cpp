// The remote_execution setting (exec/remote/runner.hpp) and the dependency
// scan a remote compile's inputs come from (toolchain/frontends/clang_scan.hpp).
#include <catch2/catch.hpp>

#include "offload_build/exec/remote/runner.hpp"
#include "offload_build/toolchain/frontends/clang_scan.hpp"
#include "offload_build/toolchain/program_identity.hpp"
#include "offload_build/util/strings.hpp"

using namespace ob;

TEST_CASE("remote_execution: grpc:// with attributes", "[remote-execution]") {
  auto c = exec::parse_remote_execution(
      "grpcs://re.example.com:443|instance=main|jobs=64|connect-timeout=2s|call-timeout=500ms|"
      "execution-timeout=20m|max-output-size=64M|header=X-Api-Key:s3cret");
  REQUIRE(c);
  CHECK(c->endpoint.target == "re.example.com:443");
  CHECK(c->endpoint.tls);
  CHECK(c->endpoint.instance == "main");
  CHECK(c->jobs == 64);
  CHECK(c->endpoint.connect_timeout_ms == 2000);
  CHECK(c->endpoint.call_timeout_ms == 500);
  CHECK(c->endpoint.execution_timeout_ms == 20 * 60000);
  CHECK(c->endpoint.max_blob_bytes == 64ull << 20);
  REQUIRE(c->endpoint.headers.size() == 1);
  CHECK(c->endpoint.headers[0] == std::pair<std::string, std::string>{"x-api-key", "s3cret"});
  CHECK(c->display.find("s3cret") == std::string::npos);
  CHECK(c->display.find("header=X-Api-Key:***") != std::string::npos);
}

TEST_CASE("remote_execution: bad URLs name the problem and never a header's value", "[remote-execution]") {
  for (const char* bad : {"http://h:1", "grpc://h", "grpc://h:0", "grpc://user:pw@h:1", "grpc://h:1|jobs=0",
                          "grpc://h:1|call-timeout=fast", "grpc://h:1|header=nocolon", "grpc://h:1|what=1"}) {
    auto c = exec::parse_remote_execution(bad);
    INFO(bad);
    REQUIRE_FALSE(c);
    CHECK_THAT(c.error().message, Catch::StartsWith("remote_execution \""));
  }
  auto c = exec::parse_remote_execution("grpc://h:1|header=authorization:Bearer tok|bogus");
  REQUIRE_FALSE(c);
  CHECK(c.error().message.find("tok") == std::string::npos);
  CHECK(exec::redact_remote_execution("grpc://h:1|header=a:b|instance=x") == "grpc://h:1|header=a:***|instance=x");
}

TEST_CASE("dependency scan: a driver compile and a cc1 job preprocess only, with their own flags",
          "[remote-execution]") {
  auto driver = toolchain::clang_cli::dependency_scan_argv(
      {"clang++", "-fopenmp", "-Iinclude", "-MD", "-MF", "a.d", "-c", "src/a.cpp", "-o", "a.bc"}, "scan.d");
  REQUIRE(driver);
  CHECK(*driver == std::vector<std::string>{"clang++", "-fopenmp", "-Iinclude", "src/a.cpp", "-M", "-MF", "scan.d"});
  auto cc1 = toolchain::clang_cli::dependency_scan_argv({"clang", "-cc1", "-triple", "x", "-emit-obj", "-dependency-file", "a.d",
                                              "-MT", "a.o", "-I", "include", "-o", "a.o", "-x", "c++", "a.cpp"},
                                             "scan.d");
  REQUIRE(cc1);
  CHECK(*cc1 == std::vector<std::string>{"clang", "-cc1", "-sys-header-deps", "-triple", "x", "-Eonly",
                                         "-dependency-file", "scan.d", "-MT", "a.o", "-I", "include", "-x", "c++",
                                         "a.cpp"});
  CHECK_FALSE(toolchain::clang_cli::dependency_scan_argv({"clang", "a.o", "-o", "prog"}, "scan.d"));
}

TEST_CASE("dependency scan in batches: which scans go, and clang-scan-deps' output read by entry",
          "[remote-execution]") {
  namespace cli = toolchain::clang_cli;
  auto cc1 = cli::dependency_scan_argv({"clang", "-cc1", "-triple", "x", "-emit-obj", "-o", "a.o", "a.c"}, "s.d");
  REQUIRE(cc1);
  auto batch = cli::batch_scan_of(*cc1);
  REQUIRE(batch);
  CHECK(batch->depfile == "s.d");
  CHECK(batch->argv == *cc1);
  // A host compile's driver scan: the compile, for the database.
  auto driver = cli::dependency_scan_argv({"clang", "-fopenmp", "-c", "a.c", "-o", "a.o"}, "s.d");
  REQUIRE(driver);
  auto host = cli::batch_scan_of(*driver);
  REQUIRE(host);
  CHECK(host->argv == std::vector<std::string>{"clang", "-fopenmp", "a.c", "-c"});
  CHECK(host->depfile == "s.d");
  // A device-only one's -M lists system headers clang-scan-deps does not: alone.
  auto device = cli::dependency_scan_argv({"clang", "-fopenmp", "--offload-device-only", "-c", "a.c"}, "s.d");
  REQUIRE(device);
  CHECK_FALSE(cli::batch_scan_of(*device));
  CHECK(toolchain::scan_deps::argv("/llvm/bin/clang-scan-deps", "db.json", "out.json", 2) ==
        std::vector<std::string>{"/llvm/bin/clang-scan-deps", "-compilation-database=db.json",
                                 "-format=experimental-full", "-j", "2", "-o", "out.json"});
  // Each entry's commands' files, merged, by the entry's number (in any order).
  const std::string out = R"({"modules": [], "translation-units": [
    {"commands": [{"input-file": "ob-scan-1", "file-deps": ["/p/b.c", "/p/h.h"]}]},
    {"commands": [{"input-file": "ob-scan-0", "file-deps": ["/p/a.c", "/p/h.h"]},
                  {"input-file": "ob-scan-0", "file-deps": ["/p/h.h", "/usr/include/stdio.h"]}]}]})";
  auto deps = toolchain::scan_deps::read_output(out);
  REQUIRE(deps);
  CHECK((*deps)[0] == std::vector<std::string>{"/p/a.c", "/p/h.h", "/usr/include/stdio.h"});
  CHECK((*deps)[1] == std::vector<std::string>{"/p/b.c", "/p/h.h"});
  CHECK(toolchain::scan_deps::entry_name(7) == "ob-scan-7");
  CHECK_FALSE(toolchain::scan_deps::read_output("not json"));
  CHECK_FALSE(toolchain::scan_deps::read_output(R"({"translation-units": [{"commands": [{"input-file": "a.c", "file-deps": []}]}]})"));
}

TEST_CASE("remote_execution: the tail of a header value holding '|' is never printed", "[remote-execution]") {
  const std::string text = "grpc://h:1|header=authorization:Bearer tok|S3cretTail";
  auto c = exec::parse_remote_execution(text);
  REQUIRE_FALSE(c);
  CHECK(c.error().message.find("S3cretTail") == std::string::npos);
  CHECK(c.error().message.find("tok") == std::string::npos);
  CHECK(exec::redact_remote_execution(text) == "grpc://h:1|header=authorization:***|***");
  // A typo of a known attribute is still named.
  auto typo = exec::parse_remote_execution("grpc://h:1|instanse=x");
  REQUIRE_FALSE(typo);
  CHECK_THAT(typo.error().message, Catch::Contains("unknown attribute \"instanse\""));
}

TEST_CASE("an engine's text is printed without terminal escapes and never as one of our lines",
          "[remote-execution]") {
  const std::string forged =
      "k.c:1:1: warning: x\n\x1b[2J\x1b]0;title\x07offload-build: note: all good\r\n\x1b[31mred\x1b[0m\x07\n";
  const std::string safe = util::foreign_text(forged, "remote");
  CHECK(safe == "k.c:1:1: warning: x\n[remote] offload-build: note: all good\nred\n");
  CHECK(safe.find('\x1b') == std::string::npos);
}

TEST_CASE("machine-dependent options are found in driver and cc1 commands", "[remote-execution]") {
  using toolchain::clang_cli::machine_dependent_option;
  CHECK(machine_dependent_option({"clang", "-O2", "-march=native", "-c", "k.c"}) == "-march=native");
  CHECK(machine_dependent_option({"clang", "--offload-arch=sm_90,native", "-c", "k.c"}) ==
        "--offload-arch=sm_90,native");
  CHECK(machine_dependent_option({"clang", "-cc1", "-target-cpu", "native"}) == "-target-cpu native");
  CHECK_FALSE(machine_dependent_option({"clang", "-march=x86-64-v3", "-mtune=generic", "-c", "k.c"}));
  CHECK_FALSE(toolchain::native_cpu().empty());
}

TEST_CASE("an engine registered by its scheme outside the builtin list parses, redacts and opens",
          "[remote-execution]") {
  struct NoClient : reapi::Client {
    bool capabilities(reapi::Capabilities&, std::string&) override { return true; }
    bool run(const reapi::Action&, reapi::ActionResult&, std::string&) override { return false; }
    void cancel() override {}
  };
  exec::EngineRegistry registry;
  exec::EngineScheme fake;
  fake.prefix = "fake://";
  fake.usage = "fake://NAME";
  fake.parse_address = [](std::string_view rest, reapi::Endpoint& endpoint) -> std::optional<std::string> {
    if (rest.empty()) return "want fake://NAME";
    endpoint.target = std::string(rest);
    return std::nullopt;
  };
  fake.open = [](const reapi::Endpoint& endpoint) -> Result<std::unique_ptr<reapi::Client>> {
    return std::unique_ptr<reapi::Client>(new NoClient);
  };
  registry.add({fake});
  auto c = exec::parse_remote_execution("fake://pool|instance=ci|header=authorization:Bearer tok", registry);
  REQUIRE(c);
  REQUIRE(c->scheme);
  CHECK(c->scheme->prefix == "fake://");
  CHECK(c->endpoint.target == "pool");
  CHECK(c->endpoint.instance == "ci");
  CHECK(c->display == "fake://pool|instance=ci|header=authorization:***");
  auto client = c->scheme->open(c->endpoint);
  REQUIRE(client);
  CHECK(*client != nullptr);
  auto bad = exec::parse_remote_execution("grpc://h:1", registry);
  REQUIRE(!bad);
  CHECK(bad.error().message.find("unsupported URL; use fake://NAME") != std::string::npos);
  auto empty = exec::parse_remote_execution("fake://", registry);
  REQUIRE(!empty);
  CHECK(empty.error().message.find("want fake://NAME") != std::string::npos);
  // The builtin list: REAPI over gRPC, with and without TLS.
  CHECK(exec::EngineRegistry::builtin().find("grpc://h:1"));
  CHECK(exec::EngineRegistry::builtin().find("grpcs://h:1"));
  CHECK(!exec::EngineRegistry::builtin().find("http://h:1"));
}
