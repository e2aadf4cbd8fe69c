// The device pass and the host pass build the same code (issue 31 item 1):
// every source cargo resolves features and rustflags from reaches both, and
// where the device pass could still differ the build stops naming both sides.
// Each case runs the program under OMP_TARGET_OFFLOAD=MANDATORY and checks the
// value the kernel computed against the one the host expects.
#include <catch2/catch.hpp>

#include "cargo_workspace.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

TEST_CASE("cargo flow: features the package's dependency declaration enables reach the device pass",
          "[integration][rust][cargo-agree]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-agree"};
  const fs::path ws = factor_workspace(tmp / "ws", "kern = { path = \"../kern\", features = [\"squares\"] }");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=14 expect=14 OK");
}

TEST_CASE("cargo flow: a feature the package forwards (--features sq, sq = [\"kern/squares\"])",
          "[integration][rust][cargo-agree]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-agree"};
  const fs::path ws = factor_workspace(tmp / "ws", "kern = { path = \"../kern\" }",
                                       "\n[features]\nsq = [\"kern/squares\"]\n");
  check_ok(cargo_run(ws, tmp / "cache", {"--features", "sq"}), "x[7]=14 expect=14 OK");
  // Without it, the same cache: the other image.
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
}

TEST_CASE("cargo flow: build.rustflags of .cargo/config.toml reach both passes", "[integration][rust][cargo-agree]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-agree"};
  const fs::path ws = factor_workspace(tmp / "ws");
  fs::create_directories(ws / ".cargo");
  write_file(ws / ".cargo/config.toml", "[build]\nrustflags = [\"--cfg\", \"tripled\"]\n");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=21 expect=21 OK");
}

TEST_CASE("cargo flow: target.<triple>.rustflags, CARGO_TARGET_<TRIPLE>_RUSTFLAGS and CARGO_BUILD_RUSTFLAGS",
          "[integration][rust][cargo-agree]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-agree"};
  const fs::path ws = factor_workspace(tmp / "ws");
  fs::create_directories(ws / ".cargo");
  // target.<triple> wins over build.rustflags (cargo's precedence), on both passes.
  write_file(ws / ".cargo/config.toml", "[build]\nrustflags = [\"--cfg\", \"nothing\"]\n\n"
                                        "[target.x86_64-unknown-linux-gnu]\nrustflags = \"--cfg tripled\"\n");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=21 expect=21 OK");
  write_file(ws / ".cargo/config.toml", "");
  check_ok(cargo_run(ws, tmp / "cache", {}, {{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS", "--cfg tripled"}}),
           "x[7]=21 expect=21 OK");
  check_ok(cargo_run(ws, tmp / "cache", {}, {{"CARGO_BUILD_RUSTFLAGS", "--cfg tripled"}}), "x[7]=21 expect=21 OK");
}

TEST_CASE("cargo flow: RUSTFLAGS and CARGO_ENCODED_RUSTFLAGS win over the config, on both passes",
          "[integration][rust][cargo-agree]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-agree"};
  const fs::path ws = factor_workspace(tmp / "ws");
  fs::create_directories(ws / ".cargo");
  write_file(ws / ".cargo/config.toml", "[build]\nrustflags = [\"--cfg\", \"tripled\"]\n");
  check_ok(cargo_run(ws, tmp / "cache", {}, {{"RUSTFLAGS", "--cfg nothing"}}), "x[7]=7 expect=7 OK");
  check_ok(cargo_run(ws, tmp / "cache", {}, {{"CARGO_ENCODED_RUSTFLAGS", "--cfg\x1fnothing"}}), "x[7]=7 expect=7 OK");
}

TEST_CASE("cargo flow: a dependency of the kernel crate, and one further down, get the features cargo unifies into "
          "them, and one the workspace's union cannot match stops the build naming both",
          "[integration][rust][cargo-agree]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-agree"};
  // kern's factor comes from `util`, whose feature only app enables: cargo
  // unifies it into the host pass, and the device pass of kern gets it too
  // (`--features util/big`: util is kern's own dependency).
  const fs::path ws = factor_workspace(tmp / "ws", "kern = { path = \"../kern\" }\nutil = { path = \"../util\", "
                                                   "features = [\"big\"] }");
  fs::create_directories(ws / "util/src");
  write_file(ws / "util/Cargo.toml", "[package]\nname = \"util\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                     "publish = false\n\n[features]\nbig = []\n");
  write_file(ws / "util/src/lib.rs", "#![no_std]\npub const fn base() -> f64 {\n    if cfg!(feature = \"big\") { 10.0 } else "
                                     "{ 1.0 }\n}\n");
  edit_file(ws / "Cargo.toml", "members = [\"app\", \"kern\"]", "members = [\"app\", \"kern\", \"util\"]");
  edit_file(ws / "kern/Cargo.toml", "[features]", "[dependencies]\nutil = { path = \"../util\" }\n\n[features]");
  edit_file(ws / "kern/src/lib.rs", "let mut f = 1.0;", "let mut f = util::base();");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=70 expect=70 OK");
  // Through `mid`: no --features of kern's device pass can name util; cargo's
  // unification across the workspace gives it util's [big] (before: refused).
  fs::create_directories(ws / "mid/src");
  write_file(ws / "mid/Cargo.toml", "[package]\nname = \"mid\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                    "publish = false\n\n[dependencies]\nutil = { path = \"../util\" }\n");
  write_file(ws / "mid/src/lib.rs", "#![no_std]\npub use util::base;\n");
  edit_file(ws / "Cargo.toml", "\"util\"]", "\"util\", \"mid\"]");
  edit_file(ws / "kern/Cargo.toml", "util = { path = \"../util\" }", "mid = { path = \"../mid\" }");
  edit_file(ws / "kern/src/lib.rs", "util::base()", "mid::base()");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=70 expect=70 OK");
  // A member app does not build enables util's `huge` too: the workspace's
  // union is not the host pass's, so the build stops, naming both and the fix.
  edit_file(ws / "util/Cargo.toml", "big = []\n", "big = []\nhuge = []\n");
  fs::create_directories(ws / "extra/src");
  write_file(ws / "extra/Cargo.toml", "[package]\nname = \"extra\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                      "publish = false\n\n[dependencies]\nutil = { path = \"../util\", features = "
                                      "[\"huge\"] }\n");
  write_file(ws / "extra/src/lib.rs", "");
  edit_file(ws / "Cargo.toml", "\"mid\"]", "\"mid\", \"extra\"]");
  auto r = cargo_run(ws, tmp / "cache");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());  // stopped before anything ran
  CHECK_THAT(r.err, Catch::Contains("the device pass and the host pass would build util with different features") &&
                        Catch::Contains("host pass (cargo build -p app): features [big]") &&
                        Catch::Contains("device pass of kern for host: no features") &&
                        Catch::Contains("enable features [big] in kern's dependency on util"));
  // Done as it says: the program is right.
  edit_file(ws / "kern/Cargo.toml", "mid = { path = \"../mid\" }",
            "mid = { path = \"../mid\" }\nutil = { path = \"../util\", features = [\"big\"] }");
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=70 expect=70 OK");
}
