// A no-op `cargo offload build` (issue 53, "Cost"): cargo's answers about the
// project (`cargo metadata`, `cargo config get`, the `--unit-graph` plans) are
// remembered under the files they depend on, so a second build asks none of
// them, and each change that alters an answer (a config file appearing, a
// Cargo.toml edit, a new program file) asks again and builds what it says.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>

#include "cargo_workspace.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// Every file and directory of the workspace but target/ modified a minute
// ago: an answer is not remembered while a file it depends on was modified
// within the last second (the racy-file rule), and the test must not depend
// on how fast it runs.
void backdate(const fs::path& ws) {
  const auto then = fs::file_time_type::clock::now() - std::chrono::minutes(1);
  for (auto it = fs::recursive_directory_iterator(ws); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename() == "target") {
      it.disable_recursion_pending();
      continue;
    }
    fs::last_write_time(it->path(), then);
  }
  fs::last_write_time(ws, then);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// How many of cargo's planning questions a -v run asked.
struct Asked {
  size_t metadata, config, graphs;
};
Asked asked(const process::Captured& r) {
  return {count(r.err, " metadata --format-version 1"), count(r.err, " config get --format json"),
          count(r.err, "--unit-graph")};
}

}  // namespace

TEST_CASE("a no-op cargo offload build asks cargo nothing it answered before, and a change asks again",
          "[integration][rust][cargo-noop]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-noop"};
  const fs::path ws = factor_workspace(tmp / "ws");
  const fs::path cache = tmp / "cache";
  const std::vector<std::string> verbose{"-v"};
  check_ok(cargo_run(ws, cache), "x[7]=7 expect=7 OK");
  backdate(ws);  // the first build wrote Cargo.lock as cargo answered

  auto first = cargo_run(ws, cache, {}, {}, verbose);
  check_ok(first, "x[7]=7 expect=7 OK");
  const Asked a = asked(first);
  CHECK(a.metadata == 1);
  CHECK(a.config == 1);
  CHECK(a.graphs == 2);  // the host pass's plan and the device pass's

  // Nothing changed: nothing asked.
  auto noop = cargo_run(ws, cache, {}, {}, verbose);
  check_ok(noop, "x[7]=7 expect=7 OK");
  const Asked n = asked(noop);
  CHECK(n.metadata == 0);
  CHECK(n.config == 0);
  CHECK(n.graphs == 0);

  // A config file that appears is read: both passes get its cfg.
  write_file(ws / ".cargo/config.toml", "[build]\nrustflags = [\"--cfg\", \"tripled\"]\n");
  auto cfg = cargo_run(ws, cache, {}, {}, verbose);
  check_ok(cfg, "x[7]=21 expect=21 OK");
  CHECK(asked(cfg).config == 1);

  // A Cargo.toml edit is read: the dependency's feature reaches the kernel.
  edit_file(ws / "app/Cargo.toml", "kern = { path = \"../kern\" }",
            "kern = { path = \"../kern\", features = [\"squares\"] }");
  auto feat = cargo_run(ws, cache, {}, {}, verbose);
  check_ok(feat, "x[7]=42 expect=42 OK");
  CHECK(asked(feat).metadata == 1);
  CHECK(asked(feat).graphs == 2);

  // A new program file is found: cargo's target discovery is asked again.
  write_file(ws / "app/src/bin/other.rs", "fn main() {\n    println!(\"other {}\", kern::report());\n}\n");
  auto other = cargo_run(ws, cache, {"--bin", "other"}, {}, verbose);
  check_ok(other, "other x[7]=42 expect=42 OK");
  CHECK(asked(other).metadata == 1);
}

// offload-build's own steps after the device passes (the package, the stub,
// the embed) are in the build state: a no-op runs none of them, as it serves
// no image either (before, all three ran on every no-op and the images were
// restored from the cache: 6.8x plain cargo's CPU). A step whose input or
// output changed runs again, and only what depends on it.
TEST_CASE("a no-op cargo offload build runs none of offload-build's own steps, and a changed input or output runs them again",
          "[integration][rust][cargo-noop]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-noop-steps"};
  const fs::path ws = factor_workspace(tmp / "ws");
  const fs::path cache = tmp / "cache";
  const std::vector<std::string> verbose{"-v"};
  check_ok(cargo_run(ws, cache), "x[7]=7 expect=7 OK");
  auto packaged = [](const process::Captured& r) { return count(r.err, "llvm-offload-binary -o "); };
  auto embedded = [](const process::Captured& r) { return count(r.err, " -fembed-offload-object="); };

  auto noop = cargo_run(ws, cache, {}, {}, verbose);
  check_ok(noop, "x[7]=7 expect=7 OK");
  CHECK(packaged(noop) == 0);
  CHECK(embedded(noop) == 0);
  CHECK_THAT(noop.err, Catch::Contains(" 0 from cache, 0 run, "));

  // The package gone: it and the embed run again from the image as it is (no device pass).
  std::vector<fs::path> packages;
  for (const auto& e : fs::recursive_directory_iterator(ws / "target/offload"))
    if (e.path().extension() == ".offload") packages.push_back(e.path());
  REQUIRE(packages.size() == 1);
  fs::remove(packages.front());
  auto repackaged = cargo_run(ws, cache, {}, {}, verbose);
  check_ok(repackaged, "x[7]=7 expect=7 OK");
  CHECK(packaged(repackaged) == 1);
  CHECK(embedded(repackaged) == 1);
  CHECK(fs::exists(packages.front()));
  CHECK_THAT(repackaged.err, Catch::Contains(" 0 from cache, 2 run, "));

  // A kernel crate's edit: its device pass, the package and the embed run; the program has the new kernel.
  edit_file(ws / "kern/src/lib.rs", "let mut f = 1.0;", "let mut f = 5.0;");
  auto edited = cargo_run(ws, cache, {}, {}, verbose);
  check_ok(edited, "x[7]=35 expect=35 OK");
  CHECK(packaged(edited) == 1);
  CHECK(embedded(edited) == 1);
}

// `rustup which` (a no-op's largest cost after cargo's own pass) is
// remembered under what rustup's answer depends on. A rustup that logs each
// call, ahead of the real one in PATH, with its own RUSTUP_HOME: a second
// build asks it nothing; settings.toml changed (a new default host) or a
// toolchain installed (toolchains/ changed) asks again.
TEST_CASE("a no-op cargo offload build asks rustup nothing it answered before, and a changed rustup home asks again",
          "[integration][rust][cargo-noop]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  auto tc = toolchain::rust::find_rust_toolchain(std::nullopt);
  REQUIRE(tc);
  TempDir tmp{"ob-cargo-noop-rustup"};
  const fs::path ws = factor_workspace(tmp / "ws"), home = tmp / "rustup-home", bin = tmp / "bin";
  const fs::path log = tmp / "rustup-calls.log";
  fs::create_directories(home / "toolchains");
  write_file(home / "settings.toml", "default_host_triple = \"x86_64-unknown-linux-gnu\"\n");
  write_file(bin / "rustup", "#!/bin/sh\necho \"$*\" >> " + log.string() + "\necho " + tc->rustc.string() + "\n");
  fs::permissions(bin / "rustup", fs::perms::owner_all);
  auto backdate = [](const fs::path& p, int minutes) {
    fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::minutes(minutes));
  };
  backdate(bin / "rustup", 10);  // the racy-file rule: nothing is remembered while a file it depends on is this new
  backdate(home / "settings.toml", 10);
  backdate(home / "toolchains", 10);
  const char* path = std::getenv("PATH");
  const Env env{{"PATH", bin.string() + ":" + (path ? path : "/usr/bin:/bin")},
                {"RUSTUP_HOME", home.string()},
                {"RUSTUP_TOOLCHAIN", std::nullopt},
                {"RUSTC", std::nullopt}};
  auto calls = [&] { return count(fs::exists(log) ? read_file(log) : "", "which --toolchain nightly rustc"); };
  check_ok(cargo_run(ws, tmp / "cache", {}, env), "x[7]=7 expect=7 OK");
  CHECK(calls() == 1);
  check_ok(cargo_run(ws, tmp / "cache", {}, env), "x[7]=7 expect=7 OK");
  CHECK(calls() == 1);  // remembered
  write_file(home / "settings.toml", "default_host_triple = \"aarch64-unknown-linux-gnu\"\n");
  backdate(home / "settings.toml", 5);
  check_ok(cargo_run(ws, tmp / "cache", {}, env), "x[7]=7 expect=7 OK");
  CHECK(calls() == 2);
  fs::create_directories(home / "toolchains/nightly-2026-12-01-x86_64-unknown-linux-gnu");
  backdate(home / "toolchains", 5);
  check_ok(cargo_run(ws, tmp / "cache", {}, env), "x[7]=7 expect=7 OK");
  CHECK(calls() == 3);
  check_ok(cargo_run(ws, tmp / "cache", {}, env), "x[7]=7 expect=7 OK");
  CHECK(calls() == 3);
}
