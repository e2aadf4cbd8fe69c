// rustc discovery and flavour: pure decisions on hand-made facts, the errors a
// user sees for a missing, stable or too-new rustc, and one probe of this machine.
#include <catch2/catch.hpp>
#include <fstream>

#include "offload_build/toolchain/doctor_facts.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "support/temp_dir.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::toolchain::rust;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// The nightly of offload-recipes.md: -Zoffload without LLVM Offload.
RustcFacts nightly_facts() {
  RustcFacts f;
  f.rustc = "/rust/bin/rustc";
  f.origin = "rustup nightly";
  f.version = "1.97.0-nightly";
  f.version_line = "rustc 1.97.0-nightly (e50aa6fba 2026-05-19)";
  f.nightly = true;
  f.accepts_offload = true;
  f.offload_settings = {"Host=<Absolute-Path>", "Device", "Test"};
  f.llvm_offload = Tri::no;
  f.llvm_offload_note = "-Zoffload=Host= panics: not built with LLVM Offload support";
  return f;
}

}  // namespace

TEST_CASE("flavour: test without LLVM Offload, native with it, three-pass recognized", "[rust][probe]") {
  auto f = nightly_facts();
  auto c = choose_flavour(f);
  CHECK(c.flavour == Flavour::Test);
  CHECK_THAT(c.why, Contains("built without LLVM Offload"));
  CHECK_THAT(c.why, Contains("offload-build packages and embeds the device images itself"));

  f.llvm_offload = Tri::yes;
  f.llvm_offload_note = "-Zoffload=Host= compiles an empty crate";
  CHECK(choose_flavour(f).flavour == Flavour::Native);
  CHECK_THAT(choose_flavour(f).why, Contains("-Zoffload=Host=<abs>/host.out"));

  f.llvm_offload = Tri::unknown;
  CHECK(choose_flavour(f).flavour == Flavour::Test);  // the safe choice

  f.offload_settings = {"HostMetadata=<path>", "Device=<path>", "Host=<path>"};
  CHECK(choose_flavour(f).flavour == Flavour::ThreePass);
  CHECK(flavour_name(Flavour::ThreePass) == "three-pass");

  f.offload_settings = {"Enable"};
  CHECK(choose_flavour(f).flavour == Flavour::None);
}

TEST_CASE("a usable rustc becomes a RustToolchain that says how it is driven", "[rust][probe]") {
  auto tc = rust_toolchain_from(nightly_facts());
  REQUIRE(tc.ok());
  CHECK(tc->rustc == fs::path("/rust/bin/rustc"));
  CHECK(tc->flavour == Flavour::Test);
  CHECK(tc->sysroot() == fs::path("/rust"));
  CHECK_THAT(tc->describe(), StartsWith("rustc 1.97.0-nightly (e50aa6fba 2026-05-19) at "
                                        "/rust/bin/rustc (from rustup nightly); flavour test: "));
}

TEST_CASE("no, stable or unfit rustc: an error that says what to install", "[rust][probe]") {
  auto expect = [](const RustcFacts& f, const std::string& what) {
    auto r = rust_toolchain_from(f);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == exit_code::usage);
    CHECK_THAT(r.error().message, Contains(what));
    CHECK_THAT(r.error().message, !Contains("panicked"));
  };
  RustcFacts none;
  expect(none, "no rustc found (looked at $RUSTC, the rustup nightly toolchain and PATH); Rust "
               "offload needs a nightly rustc with -Zoffload: install a nightly with `rustup "
               "toolchain install nightly`");
  none.missing_note = "$RUSTC=/nope/rustc is not an executable file";
  expect(none, "$RUSTC=/nope/rustc is not an executable file; Rust offload needs a nightly rustc");

  auto stable = nightly_facts();
  stable.nightly = false;
  stable.version_line = "rustc 1.95.0 (59807616e 2026-04-14)";
  expect(stable, "rustc 1.95.0 (59807616e 2026-04-14) at /rust/bin/rustc (from rustup nightly) is "
                 "not a nightly rustc; Rust offload needs -Zoffload, which only nightly accepts");
  stable.origin = "$RUSTC";
  expect(stable, "(or unset $RUSTC to use the rustup nightly)");

  auto old = nightly_facts();
  old.accepts_offload = false;
  expect(old, "does not know -Zoffload; update it (`rustup update nightly`)");

  auto newer = nightly_facts();
  newer.offload_settings = {"HostMetadata=<path>", "Device=<path>", "Host=<path>"};
  expect(newer, "speaks the newer three-pass -Zoffload (HostMetadata=<path>, Device=<path>, "
                "Host=<path>), which offload-build does not drive yet");
}

TEST_CASE("doctor names the three-pass flavour plainly", "[rust][probe][doctor]") {
  toolchain::doctor::DoctorFacts f;
  f.rust = nightly_facts();
  f.rust.offload_settings = {"HostMetadata=<path>", "Device=<path>", "Host=<path>"};
  CHECK_THAT(toolchain::doctor::conclusions(f).back(),
             Contains("three-pass flavour (HostMetadata=, Device=, Host=), which offload-build "
                      "does not drive yet"));
}

TEST_CASE("rustc search: a manifest hint or $RUSTC is used alone", "[rust][probe]") {
  test::TempDir tmp("ob-rust-probe");
  RustcSearch s;
  s.hint = tmp.path() / "no-rustc";
  auto f = probe_rustc(s);
  CHECK_FALSE(f.rustc.has_value());
  CHECK(f.origin == "offload.json");
  CHECK_THAT(f.missing_note, Contains("is not an executable file"));

  // A fake stable rustc: only --version is asked of it.
  const fs::path fake = tmp.path() / "rustc";
  std::ofstream(fake) << "#!/bin/sh\necho 'rustc 1.95.0 (59807616e 2026-04-14)'\n";
  fs::permissions(fake, fs::perms::owner_all);
  RustcSearch env;
  env.env_rustc = fake.string();
  auto stable = probe_rustc(env);
  REQUIRE(stable.rustc == fake);
  CHECK(stable.origin == "$RUSTC");
  CHECK(stable.version == "1.95.0");
  CHECK_FALSE(stable.nightly);

  RustcSearch nothing;  // no hint, no $RUSTC, empty PATH, empty rustup home
  nothing.rustup_home = tmp.path();
  CHECK_FALSE(probe_rustc(nothing).rustc.has_value());

  RustcSearch dir;  // a rustup home with a nightly toolchain directory, no rustup on PATH
  dir.rustup_home = tmp.path() / "rustup";
  fs::create_directories(*dir.rustup_home / "toolchains/nightly-2026-05-19-x86_64-unknown-linux-gnu/bin");
  fs::copy_file(fake, *dir.rustup_home / "toolchains/nightly-2026-05-19-x86_64-unknown-linux-gnu/bin/rustc");
  auto found = probe_rustc(dir);
  CHECK(found.origin == "rustup nightly");
  CHECK(found.rustc == *dir.rustup_home / "toolchains/nightly-2026-05-19-x86_64-unknown-linux-gnu/bin/rustc");
}

TEST_CASE("rustc probe of this machine", "[rust][probe]") {
  auto tc = find_rust_toolchain(std::nullopt);
  if (!tc) OB_SKIP("no nightly rustc with -Zoffload (" << tc.error().message << ")");
  // The nightly here (offload-recipes.md) knows -Zoffload but lacks LLVM Offload.
  CHECK((tc->flavour == Flavour::Test || tc->flavour == Flavour::Native));
  CHECK(tc->cargo.has_value());
}
