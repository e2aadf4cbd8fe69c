// The cargo flow as a new user meets it (issue 20 items 4 and 6): `cargo run
// --verify` proves the kernel ran on the offload device, the build ends with
// the same summary line as a manifest build, an offload-build option put after
// `cargo run` gets offload-build's own message, and `init --lang cargo` makes a
// package that builds and verifies in both profiles as is.
#include <catch2/catch.hpp>

#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kExampleOut = "rust-cargo: x[0]=1 x[1]=3 x[255]=511 mismatches=0 OK\n";

// `cargo run --verify` (with `extra` cargo arguments): the program's output,
// the runtime's launch in the verify line, exit 0; nothing blamed on cargo.
process::Captured run_verify(const fs::path& dir, const fs::path& cache, std::vector<std::string> extra) {
  std::vector<std::string> args{"-C", dir.string(), "--cache-dir", cache.string(), "cargo", "run", "--verify"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_ob(args);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch on device 0"));
  CHECK_FALSE(Catch::Contains("the host pass").match(r.err));
  CHECK_FALSE(Catch::Contains("unexpected argument").match(r.err));  // cargo never saw --verify
  return r;
}

}  // namespace

TEST_CASE("cargo run --verify shows the kernel launch and the summary line, debug and release",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-verify"};
  const fs::path dir = copy_rust_example("rust-cargo", tmp.path()), cache = tmp.path() / "cache";

  // The jobs: the device pass (one kernel crate, target host), the package,
  // the embed's stub and the embed, the host pass (cargo build).
  auto first = run_verify(dir, cache, {});
  CHECK(first.out == kExampleOut);
  CHECK_THAT(first.err, Catch::Matches("(.|\n)*offload-build: 5 jobs: 0 from cache, 5 run in [0-9]+\\.[0-9]{2} s\n(.|\n)*"));
  // Again: the device image, package, stub and embed current (the build state), cargo's host pass fresh.
  auto again = run_verify(dir, cache, {});
  CHECK(again.out == kExampleOut);
  CHECK_THAT(again.err, Catch::Matches("(.|\n)*offload-build: 5 jobs: 0 from cache, 0 run, 5 up to date in [0-9.]+ s\n(.|\n)*"));

  // cargo offload run --verify: the same, as a cargo subcommand (called as cargo calls it).
  const fs::path cargo_offload = fs::path(OB_BINARY).parent_path() / "cargo-offload";
  auto sub = run_tool({cargo_offload.string(), "offload", "--cache-dir", cache.string(), "run", "--verify"}, dir);
  INFO(sub.out << sub.err);
  CHECK(sub.exit_code == 0);
  CHECK(sub.out == kExampleOut);
  CHECK_THAT(sub.err, Catch::Contains("offload-build: 5 jobs: 0 from cache, 0 run, 5 up to date in ") &&
                          Catch::Contains("offload-build: verify: offload: 1 kernel launch on device 0 (scale_add)"));

  auto release = run_verify(dir, cache, {"--release"});
  CHECK(release.out == kExampleOut);
  CHECK_THAT(release.err, Catch::Contains("offload-build: 5 jobs: 0 from cache, 5 run in "));
  CHECK(fs::exists(dir / "target/x86_64-unknown-linux-gnu/release/rust-cargo"));

  // -q: no summary; the verify line stays (it is the proof asked for).
  auto quiet = run_ob({"-q", "-C", dir.string(), "--cache-dir", cache.string(), "cargo", "run", "--release", "--verify"});
  CHECK(quiet.exit_code == 0);
  CHECK_FALSE(Catch::Contains(" jobs: ").match(quiet.err));
  CHECK_THAT(quiet.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch"));

  // Nothing offloaded: --verify fails, as for a manifest build.
  auto off = run_ob({"-C", dir.string(), "--cache-dir", cache.string(), "cargo", "run", "--release", "--verify"}, {},
                    {{"OMP_TARGET_OFFLOAD", "DISABLED"}});
  INFO(off.out << off.err);
  CHECK(off.exit_code != 0);
  CHECK_FALSE(Catch::Contains("1 kernel launch").match(off.err));
}

TEST_CASE("cargo flow: an offload-build option after cargo run gets offload-build's own message",
          "[integration][rust]") {
  // No rustc needed: the arguments are checked before anything runs.
  TempDir tmp{"ob-cargo-args"};
  const std::string dir = tmp.path().string();

  // -v, -j4 and --help are cargo's too: they stay; after `--`, the program's.
  auto r = run_ob({"-C", dir, "cargo", "run", "--release", "--no-cache", "-v", "-j4", "--help", "--", "--no-cache"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--no-cache is offload-build's, not cargo's: it goes before `cargo`:\n  offload-build -C " +
                                    dir + " --no-cache cargo run --release -v -j4 --help -- --no-cache\n"));

  auto two = run_ob({"cargo", "build", "--cache-dir", "/tmp/c", "-p", "app", "--dry-run", "--target", "sm_90"});
  CHECK(two.exit_code == 2);
  CHECK_THAT(two.err, Catch::Contains("--cache-dir, --dry-run, --target are offload-build's, not cargo's: they go before "
                                      "`cargo` (after it, --target is cargo's and names a Rust target triple):\n"
                                      "  offload-build --cache-dir /tmp/c --dry-run --target sm_90 cargo build -p app\n"));

  auto build_verify = run_ob({"-C", dir, "cargo", "build", "--verify"});
  CHECK(build_verify.exit_code == 2);
  CHECK_THAT(build_verify.err, Catch::Contains("--verify goes with run"));

  // cargo offload says where they go on its own command line.
  const fs::path cargo_offload = fs::path(OB_BINARY).parent_path() / "cargo-offload";
  REQUIRE(fs::exists(cargo_offload));
  auto sub = run_tool({cargo_offload.string(), "offload", "-v", "run", "--verify", "-C", dir, "--release"});
  CHECK(sub.exit_code == 2);
  CHECK_THAT(sub.err, Catch::Contains("cargo offload: error: -C is offload-build's, not cargo's: it goes before `run`:\n"
                                      "  cargo offload -v -C " + dir + " run --verify --release\n"));
}

TEST_CASE("init --lang cargo: a cargo package that builds and run --verifies as is, debug and release",
          "[integration][rust][init]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-init-cargo"};
  const fs::path dir = tmp.path() / "my-cargo-app", cache = tmp.path() / "cache";
  auto made = run_ob({"init", "--lang", "cargo", dir.string()});
  INFO(made.out << made.err);
  REQUIRE(made.exit_code == 0);
  CHECK_THAT(made.out, Catch::Contains("cargo run --verify"));
  for (const char* f : {"Cargo.toml", "Cargo.lock", "src/lib.rs", "src/main.rs", "README.md", ".gitignore"}) {
    CHECK(fs::exists(dir / f));
    CHECK_FALSE(Catch::Contains("@NAME@").match(read_file(dir / f)));
    CHECK_FALSE(Catch::Contains("@CRATE@").match(read_file(dir / f)));
  }
  const std::string toml = read_file(dir / "Cargo.toml");
  CHECK_THAT(toml, Catch::Contains("name = \"my-cargo-app\"") && Catch::Contains("[package.metadata.offload]") &&
                       Catch::Contains("unexpected_cfgs") && Catch::Contains("[profile.dev]\npanic = \"abort\"") &&
                       Catch::Contains("[profile.release]\npanic = \"abort\""));
  CHECK_THAT(read_file(dir / "src/lib.rs"), Catch::Contains("#[panic_handler]") && Catch::Contains("#[rustc_offload_kernel]"));

  const std::string expect = "my-cargo-app: n=1024 y[10]=21 mismatches=0 OK\n";
  auto debug = run_verify(dir, cache, {});
  CHECK(debug.out == expect);
  CHECK(fs::exists(dir / "target/x86_64-unknown-linux-gnu/debug/my-cargo-app"));
  auto release = run_verify(dir, cache, {"--release"});
  CHECK(release.out == expect);
  CHECK(fs::exists(dir / "target/x86_64-unknown-linux-gnu/release/my-cargo-app"));
  CHECK_FALSE(Catch::Contains("warning").match(debug.err + release.err));  // no cfg or lint warnings
}
