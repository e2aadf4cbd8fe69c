// offload.json for Rust crates: "language": "rust", one crate root, "device_cfg",
// "toolchain" as {"llvm", "rustc"}, and the list keys that do not apply.
#include <catch2/catch.hpp>
#include <fstream>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

struct RustProject {
  test::TempDir tmp{"ob-rust-manifest"};
  RustProject() {
    for (const char* f : {"src/main.rs", "src/host.rs", "src/lib.rs", "main.c"}) {
      fs::create_directories((tmp.path() / f).parent_path());
      std::ofstream(tmp.path() / f) << "\n";
    }
  }
  fs::path file() const { return tmp.path() / "offload.json"; }
  Result<manifest::Manifest> load(const std::string& members) const {
    std::ofstream(file()) << "{\n  \"name\": \"app\",\n  \"targets\": [\"host\"],\n" << members << "\n}";
    return manifest::load_manifest(file(), ob::toolchain::frontend::manifest_options());
  }
  void require_error(const Result<manifest::Manifest>& r, int line, int col, const std::string& what) const {
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == exit_code::usage);
    CHECK_THAT(r.error().message, StartsWith(file().string() + ":" + std::to_string(line) + ":" +
                                             std::to_string(col) + ": error: "));
    CHECK_THAT(r.error().message, Contains(what));
  }
};

}  // namespace

TEST_CASE("a Rust crate root by language or by extension", "[rust][manifest]") {
  RustProject p;
  auto by_language = p.load(R"(  "language": "rust",
  "sources": ["src/main.rs"])");
  REQUIRE(by_language.ok());
  CHECK(by_language->is_rust());
  REQUIRE(by_language->sources.size() == 1);
  CHECK(by_language->sources[0].language == manifest::Language::Rust);
  CHECK(by_language->device_cfg == "offload_device");
  CHECK_FALSE(by_language->rustc.has_value());

  auto by_extension = p.load(R"(  "sources": ["src/main.rs"], "device_cfg": "gpu")");
  REQUIRE(by_extension.ok());
  CHECK(by_extension->is_rust());
  CHECK(by_extension->device_cfg == "gpu");
  CHECK(manifest::language_from_extension("lib.rs") == manifest::Language::Rust);
  CHECK(manifest::parse_language("rust").ok());
  CHECK(manifest::language_name(manifest::Language::Rust) == "rust");
}

TEST_CASE("a Rust crate has one crate root and no C sources", "[rust][manifest]") {
  RustProject p;
  p.require_error(p.load(R"(  "sources": ["src/main.rs", "src/host.rs"])"), 4, 30,
                  "a Rust crate has one crate root, but \"sources\" names \"src/host.rs\" and "
                  "\"src/main.rs\"; list only the crate root");
  p.require_error(p.load(R"(  "sources": ["src/*.rs"])"), 4, 15, "a Rust crate has one crate root");
  p.require_error(p.load(R"(  "sources": ["main.c", "src/main.rs"])"), 4, 25,
                  "a Rust crate is built from its crate root alone");
  p.require_error(p.load(R"(  "language": "c", "sources": ["main.c"], "device_cfg": "gpu")"), 4, 57,
                  "\"device_cfg\" applies to Rust crates only");
}

TEST_CASE("device_cfg, defines and include_dirs for Rust", "[rust][manifest]") {
  RustProject p;
  p.require_error(p.load(R"(  "sources": ["src/main.rs"], "device_cfg": "off-load")"), 4, 45,
                  "\"device_cfg\" \"off-load\" is not a cfg name");
  p.require_error(p.load(R"(  "sources": ["src/main.rs"], "include_dirs": ["inc"])"), 4, 47,
                  "\"include_dirs\" does not apply to a Rust crate");
  p.require_error(p.load(R"(  "sources": ["src/main.rs"], "defines": ["MAX(a,b)=a"])"), 4, 43,
                  "define \"MAX(a,b)=a\" has parameters; for Rust, defines become --cfg NAME");
  auto ok = p.load(R"(  "sources": ["src/main.rs"], "defines": ["fast", "mode=wide"])");
  REQUIRE(ok.ok());
  CHECK(ok->defines == std::vector<std::string>{"fast", "mode=wide"});
}

TEST_CASE("toolchain is a string (the LLVM root) or {llvm, rustc}", "[rust][manifest]") {
  RustProject p;
  auto as_string = p.load(R"(  "sources": ["src/main.rs"], "toolchain": "llvm/")");
  REQUIRE(as_string.ok());
  CHECK(as_string->toolchain == p.tmp.path() / "llvm");
  CHECK_FALSE(as_string->rustc.has_value());

  auto as_object = p.load(R"(  "sources": ["src/main.rs"],
  "toolchain": {"llvm": "/usr/lib/llvm-22", "rustc": "rust/bin/rustc"})");
  REQUIRE(as_object.ok());
  CHECK(as_object->toolchain == fs::path("/usr/lib/llvm-22"));
  CHECK(as_object->rustc == p.tmp.path() / "rust/bin/rustc");

  auto only_rustc = p.load(R"(  "sources": ["src/main.rs"], "toolchain": {"rustc": "/opt/rustc"})");
  REQUIRE(only_rustc.ok());
  CHECK_FALSE(only_rustc->toolchain.has_value());
  CHECK(only_rustc->rustc == fs::path("/opt/rustc"));

  p.require_error(p.load(R"(  "sources": ["src/main.rs"], "toolchain": {"rust": "/opt/rustc"})"), 4, 45,
                  "unknown key \"rust\" in \"toolchain\"; did you mean \"rustc\"?");
  p.require_error(p.load(R"(  "sources": ["src/main.rs"], "toolchain": {"rustc": ""})"), 4, 54,
                  "\"toolchain\" \"rustc\" must be a non-empty string");
  p.require_error(p.load(R"(  "sources": ["src/main.rs"], "toolchain": 22)"), 4, 44,
                  "\"toolchain\" must be a string, not a number");
}
