// offload-build init: each language's template builds and `run --verify`
// passes as is; existing files are never overwritten.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"
#include "rust_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

void init_builds_and_runs(const std::string& lang, const std::vector<std::string>& expect_files) {
  TempDir tmp{"ob-init"};
  const fs::path dir = tmp.path() / ("my-" + lang + "-app");
  auto made = run_ob({"init", "--lang", lang, dir.string()});
  INFO(made.out << made.err);
  REQUIRE(made.exit_code == 0);
  CHECK_THAT(made.out, Catch::Contains("run --verify"));
  for (const auto& f : expect_files) CHECK(fs::exists(dir / f));

  // The project is named after its directory.
  auto manifest = nlohmann::json::parse(read_file(dir / "offload.json"));
  CHECK(manifest["name"] == "my-" + lang + "-app");
  CHECK_FALSE(Catch::Contains("@NAME@").match(read_file(dir / "README.md")));

  const std::string cache = (tmp.path() / "cache").string();
  auto run = run_ob({"-C", dir.string(), "--cache-dir", cache, "run", "--verify"});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("my-" + lang + "-app: ") && Catch::Contains("OK"));
  CHECK_THAT(run.err, Catch::Contains("offload-build: verify: offload: "));
  CHECK(fs::exists(dir / "build" / ("my-" + lang + "-app")));
}

}  // namespace

TEST_CASE("init --lang c: a project that builds and runs as is", "[init]") {
  init_builds_and_runs("c", {"offload.json", "src/main.c", "README.md", ".gitignore"});
}

TEST_CASE("init --lang cxx: a project that builds and runs as is", "[init]") {
  init_builds_and_runs("cxx", {"offload.json", "src/main.cpp", "src/kernels.cpp",
                               "include/kernels.hpp", "README.md"});
}

TEST_CASE("init --lang rust: a project that builds and runs as is", "[init][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  init_builds_and_runs("rust", {"offload.json", "src/main.rs", "README.md"});
}

TEST_CASE("init defaults to C, is relative to -C, and never overwrites a file", "[init]") {
  TempDir tmp{"ob-init"};
  auto made = run_ob({"-C", tmp.path().string(), "init", "app"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  CHECK(fs::exists(tmp.path() / "app/src/main.c"));

  write_file(tmp.path() / "app/src/main.c", "/* mine */\n");
  fs::remove(tmp.path() / "app/README.md");
  auto again = run_ob({"init", (tmp.path() / "app").string()});
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Catch::Contains("refusing to overwrite") && Catch::Contains("main.c") &&
                            Catch::Contains("nothing was written"));
  CHECK(read_file(tmp.path() / "app/src/main.c") == "/* mine */\n");
  CHECK_FALSE(fs::exists(tmp.path() / "app/README.md"));  // nothing written at all

  auto bad = run_ob({"init", "--lang", "fortran", (tmp.path() / "f").string()});
  CHECK(bad.exit_code == 2);
  CHECK_FALSE(fs::exists(tmp.path() / "f"));
}

TEST_CASE("init finds the templates of an installed offload-build next to the binary", "[init]") {
  TempDir tmp{"ob-init"};
  // An install tree: bin/offload-build and share/offload-build/templates/.
  const fs::path prefix = tmp.path() / "prefix";
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "share/offload-build/templates/init/c");
  fs::copy_file(OB_BINARY, prefix / "bin/offload-build");
  write_file(prefix / "share/offload-build/templates/init/c/marker.txt", "installed @NAME@\n");
  auto made = run_tool({(prefix / "bin/offload-build").string(), "init", (tmp.path() / "x").string()});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  CHECK(read_file(tmp.path() / "x/marker.txt") == "installed x\n");
}
