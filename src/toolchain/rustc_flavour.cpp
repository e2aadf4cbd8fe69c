// Pure decisions on probed rustc facts: which -Zoffload flavour to drive, and
// the user-facing error when the installed rustc cannot build Rust offload code.
#include <fmt/core.h>

#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::rust {

namespace {

bool lists(const RustcFacts& f, std::string_view prefix) {
  for (const auto& s : f.offload_settings)
    if (util::starts_with(s, prefix)) return true;
  return false;
}

std::string who(const RustcFacts& f) {
  std::string v = f.version_line.empty() ? "rustc (version unknown)" : f.version_line;
  return fmt::format("{} at {} (from {})", v, f.rustc->string(), f.origin);
}

constexpr std::string_view kInstall =
    "install a nightly with `rustup toolchain install nightly` (https://rustup.rs), or name one in $RUSTC "
    "(a manifest build also reads \"toolchain\": {\"rustc\": \"/path/to/rustc\"} in offload.json; a cargo "
    "project, the channel of its rust-toolchain.toml or `cargo +nightly offload`)";

}  // namespace

std::string_view flavour_name(Flavour f) {
  switch (f) {
    case Flavour::Test: return "test";
    case Flavour::Native: return "native";
    case Flavour::ThreePass: return "three-pass";
    case Flavour::None: return "none";
  }
  return "?";
}

FlavourChoice choose_flavour(const RustcFacts& f) {
  if (!f.rustc) return {Flavour::None, "no rustc found"};
  if (!f.nightly) return {Flavour::None, "rustc is not a nightly, so it has no -Zoffload"};
  if (!f.accepts_offload) return {Flavour::None, "this nightly does not know -Zoffload"};
  if (lists(f, "HostMetadata")) {
    return {Flavour::ThreePass,
            "-Zoffload lists HostMetadata=: the newer three-pass flavour (HostMetadata=<manifest>, "
            "Device=<manifest>, Host=<device image>) that wraps and links inside rustc"};
  }
  if (f.llvm_offload == Tri::yes && lists(f, "Host=") && lists(f, "Device")) {
    return {Flavour::Native, "rustc was built with LLVM Offload (" + f.llvm_offload_note +
                                 "), so its own -Zoffload=Device and -Zoffload=Host=<abs>/host.out "
                                 "passes embed the device images"};
  }
  if (lists(f, "Test") || f.offload_settings.empty()) {
    std::string note = f.llvm_offload == Tri::no ? "built without LLVM Offload"
                                                 : "LLVM Offload support " + f.llvm_offload_note;
    return {Flavour::Test, "rustc accepts -Zoffload=Test and was " + note +
                               ", so the host pass uses -Zoffload=Test and offload-build packages "
                               "and embeds the device images itself"};
  }
  return {Flavour::None, "-Zoffload lists neither Test nor a working Host= (settings: " +
                             util::join(f.offload_settings, ", ") + ")"};
}

Result<RustToolchain> rust_toolchain_from(const RustcFacts& f) {
  if (!f.rustc) {
    std::string head = f.missing_note.empty()
                           ? "no rustc found (looked at $RUSTC, the rustup nightly toolchain and PATH)"
                           : f.missing_note;
    return Error::usage(fmt::format("{}; Rust offload needs a nightly rustc with -Zoffload: {}",
                                    head, kInstall));
  }
  if (!f.nightly) {
    return Error::usage(fmt::format(
        "{} is not a nightly rustc; Rust offload needs -Zoffload, which only nightly accepts: {}{}",
        who(f), kInstall,
        f.origin == "$RUSTC" ? " (or unset $RUSTC to use the rustup nightly)"
        : util::starts_with(f.origin, "toolchain ")
            ? "; offload-build uses the toolchain you pinned rather than replace it: pin a nightly there "
              "(channel = \"nightly\" in rust-toolchain.toml), or run `cargo +nightly offload ...` / "
              "RUSTUP_TOOLCHAIN=nightly offload-build ..."
            : ""));
  }
  if (!f.accepts_offload) {
    return Error::usage(fmt::format("{} does not know -Zoffload; update it (`rustup update nightly`) "
                                    "or name a newer nightly",
                                    who(f)));
  }
  const FlavourChoice choice = choose_flavour(f);
  if (choice.flavour == Flavour::ThreePass) {
    return Error::usage(fmt::format(
        "{} speaks the newer three-pass -Zoffload ({}), which offload-build does not drive yet; "
        "name a nightly whose -Zoffload lists Test, e.g. nightly-2026-05-19 (`rustup toolchain "
        "install nightly-2026-05-19`, then \"toolchain\": {{\"rustc\": ...}}), or run the three "
        "passes by hand as docs/RUST.md shows",
        who(f), util::join(f.offload_settings, ", ")));
  }
  if (choice.flavour == Flavour::None)
    return Error::usage(fmt::format("{} cannot build Rust offload code: {}; {}", who(f), choice.why, kInstall));
  RustToolchain tc;
  tc.rustc = *f.rustc;
  tc.origin = f.origin;
  tc.version_line = f.version_line;
  tc.flavour = choice.flavour;
  tc.why = choice.why;
  return tc;
}

std::string RustToolchain::describe() const {
  return fmt::format("{} at {} (from {}); flavour {}: {}",
                     version_line.empty() ? "rustc" : version_line, rustc.string(), origin,
                     flavour_name(flavour), why);
}

}  // namespace ob::toolchain::rust
