// rustc's diagnostics through `cargo offload` as cargo shows them (issue 39,
// minor): each printed once per build, however many passes compile the code it
// is about (the kernel crate is compiled by the device and the host pass), one
// that only the device pass gets still printed, cargo's summary line per unit,
// errors always; a build script's warning once too.
#include <catch2/catch.hpp>

#include "cargo_workspace.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"
#include "support/terminal.hpp"

using namespace ob;
using namespace ob::test;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// kern with one warning in code both passes compile, one in device-only code,
// and a build script (which each pass runs) that warns.
void two_warnings(const fs::path& ws) {
  write_file(ws / "kern/build.rs", "fn main() {\n    println!(\"cargo::warning=kern's build script warns\");\n}\n");
  const std::string lib = read_file(ws / "kern/src/lib.rs");
  write_file(ws / "kern/src/lib.rs", lib +
                                         "\npub fn shared_len() -> usize {\n    let shared_unused = 3;\n    N\n}\n"
                                         "\n#[cfg(offload_device)]\npub fn device_len() -> usize {\n"
                                         "    let device_unused = 4;\n    N\n}\n");
}

const std::string kShared = "unused variable: `shared_unused`";
const std::string kDevice = "unused variable: `device_unused`";
const std::string kScript = "kern@0.1.0: kern's build script warns";

}  // namespace

TEST_CASE("cargo flow: a warning in code both passes compile is printed once per build, a device-only one too, "
          "with cargo's summary lines, errors always",
          "[integration][rust][cargo-diagnostics]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-diagnostics"};
  const fs::path ws = factor_workspace(tmp / "ws");
  two_warnings(ws);
  auto r = cargo_run(ws, tmp / "cache");
  check_ok(r, "x[7]=7 expect=7 OK");
  INFO(r.err);
  CHECK(count(r.err, kShared) == 1);
  CHECK(count(r.err, kDevice) == 1);
  CHECK(count(r.err, kScript) == 1);
  // The device pass's unit printed both; the host pass's one was a repeat.
  CHECK(count(r.err, "warning: `kern` (lib) generated 2 warnings (run `cargo fix --lib -p kern` to apply 2 "
                     "suggestions)") == 1);
  CHECK(count(r.err, "warning: `kern` (lib) generated 1 warning (1 duplicate)\n") == 1);

  // Nothing to compile: cargo replays each fresh unit's warnings, once here as in cargo.
  auto again = cargo_run(ws, tmp / "cache", {}, {}, {"--no-cache"});
  check_ok(again, "x[7]=7 expect=7 OK");
  INFO(again.err);
  CHECK(again.err.find("(fresh)") != std::string::npos);
  CHECK(count(again.err, kShared) == 1);
  CHECK(count(again.err, kDevice) == 1);
  CHECK(count(again.err, kScript) == 1);

  // cargo's short format, compiled anew (a replay shows what was cached): one line each.
  write_file(ws / "kern/src/lib.rs", read_file(ws / "kern/src/lib.rs") + "// edited\n");
  auto short_ = cargo_run(ws, tmp / "cache", {"--message-format=short"}, {}, {"--no-cache"});
  check_ok(short_, "x[7]=7 expect=7 OK");
  INFO(short_.err);
  CHECK(count(short_.err, "kern/src/lib.rs:") == 2);
  CHECK(count(short_.err, ": warning: " + kShared) == 1);

  // cargo offload check: the same.
  auto check = run_ob({"-C", (ws / "app").string(), "--no-cache", "cargo", "check"}, {}, kMandatory);
  INFO(check.err);
  CHECK(check.exit_code == 0);
  CHECK(count(check.err, kShared) == 1);
  CHECK(count(check.err, kDevice) == 1);

  // An error is printed, with the warnings before it and cargo's own last word.
  write_file(ws / "kern/src/lib.rs", read_file(ws / "kern/src/lib.rs") +
                                         "\npub fn wrong() -> u32 {\n    \"not a number\"\n}\n");
  auto failed = cargo_run(ws, tmp / "cache");
  INFO(failed.err);
  CHECK(failed.exit_code != 0);
  CHECK(count(failed.err, "error[E0308]: mismatched types") == 1);
  CHECK(count(failed.err, kShared) == 1);
  CHECK(failed.err.find("could not compile `kern`") != std::string::npos);
}

TEST_CASE("cargo flow on a terminal: each warning once, in cargo's order (before `Finished`), in colour, "
          "cargo's progress bar erased before it",
          "[integration][rust][cargo-diagnostics]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  if (!have_script()) OB_SKIP("no `script` (util-linux) for a terminal");
  TempDir tmp{"ob-cargo-diagnostics"};
  const fs::path ws = factor_workspace(tmp / "ws");
  two_warnings(ws);
  check_ok(cargo_run(ws, tmp / "cache"), "x[7]=7 expect=7 OK");
  // Nothing to compile: cargo replays the warnings at once, and says Finished right after.
  auto r = run_ob_on_terminal({"-C", (ws / "app").string(), "--no-cache", "cargo", "build"},
                              {{"RUSTFLAGS", std::nullopt}, {"CARGO_ENCODED_RUSTFLAGS", std::nullopt}});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\x1b[1m\x1b[33mwarning") != std::string::npos);  // rustc's colours
  const std::vector<std::string> lines = render_terminal(r.out);
  auto line_of = [&](const std::string& what, size_t from = 0) {
    for (size_t i = from; i < lines.size(); ++i)
      if (lines[i].find(what) != std::string::npos) return i;
    return lines.size();
  };
  size_t shared = 0, device = 0, script = 0;
  for (const auto& l : lines) {
    shared += count(l, kShared);
    device += count(l, kDevice);
    script += count(l, kScript);
    CHECK(l.find("Building [") == std::string::npos);  // no progress bar left on a line
  }
  CHECK(shared == 1);
  CHECK(device == 1);
  CHECK(script == 1);
  const size_t device_summary = line_of("warning: `kern` (lib) generated 2 warnings");
  const size_t host_summary = line_of("warning: `kern` (lib) generated 1 warning (1 duplicate)");
  REQUIRE(host_summary < lines.size());
  CHECK(device_summary < line_of("Finished"));
  CHECK(line_of("Finished", device_summary) < host_summary);
  CHECK(host_summary < line_of("Finished", host_summary));
}
