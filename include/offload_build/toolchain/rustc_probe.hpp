// Finding the rustc that builds Rust offload code and probing what its -Zoffload
// speaks. Shared by `offload-build doctor` (which shows the facts) and the Rust
// build (which needs a flavour to plan for, or an error saying what to install).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/util/result.hpp"

namespace ob::toolchain::rust {

namespace fs = std::filesystem;

enum class Tri { yes, no, unknown };

// Everything the probes found out; pure data, filled by probe_rustc.
struct RustcFacts {
  std::optional<fs::path> rustc;   // nullopt: no rustc at all
  std::string origin;              // "manifest", "$RUSTC", "rustup nightly", "PATH"
  std::string version;             // "1.97.0-nightly"
  std::string version_line;        // "rustc 1.97.0-nightly (e50aa6fba 2026-05-19)"
  bool nightly = false;
  bool accepts_offload = false;               // -Zoffload is a known option
  std::vector<std::string> offload_settings;  // "Host=<Absolute-Path>", "Device", "Test"
  Tri llvm_offload = Tri::unknown;            // built with LLVM Offload (Host=/Device work)
  std::string llvm_offload_note;              // how that was decided, or why not
  std::string missing_note;        // why `rustc` is unset or unusable ("$RUSTC=... is not executable")
};

// How offload-build drives this rustc.
enum class Flavour {
  Test,       // -Zoffload=Test host pass; offload-build packages and embeds the device images
  Native,     // rustc built with LLVM Offload: -Zoffload=Device, -Zoffload=Host=<abs>/host.out
  ThreePass,  // newer upstream: HostMetadata=, Device=<manifest>, Host=<bin> (not driven yet)
  None,       // no usable -Zoffload
};
std::string_view flavour_name(Flavour f);  // "test", "native", "three-pass", "none"

struct FlavourChoice {
  Flavour flavour = Flavour::None;
  std::string why;  // one plain sentence
};
// Pure: the flavour the facts call for, and why.
FlavourChoice choose_flavour(const RustcFacts& facts);

// What a Rust build needs: the compiler, where it came from, the flavour.
struct RustToolchain {
  fs::path rustc;
  std::string origin;
  std::string version_line;
  Flavour flavour = Flavour::Test;
  std::string why;
  std::optional<fs::path> cargo;  // the cargo of the same toolchain, when there is one

  // "rustc 1.97.0-nightly (...) from rustup nightly: flavour test (<why>)"
  std::string describe() const;
  // The toolchain directory holding lib/rustlib (rustc's bin/..).
  fs::path sysroot() const { return rustc.parent_path().parent_path(); }
};

// Pure: the toolchain, or an error that says what to install or change (usage, exit 2).
Result<RustToolchain> rust_toolchain_from(const RustcFacts& facts);

// Where to look: the manifest's "toolchain": {"rustc"}, then $RUSTC, then a
// toolchain the user pinned (`cargo +TOOLCHAIN offload`, $RUSTUP_TOOLCHAIN,
// `rustup override`, rust-toolchain.toml: `rustup which --toolchain`), then the
// rustup nightly (`rustup which`, then $RUSTUP_HOME or ~/.rustup), then rustc on PATH.
struct RustcSearch {
  std::optional<fs::path> hint;
  std::optional<std::string> env_rustc;  // $RUSTC
  std::string path_env;                  // $PATH
  std::optional<fs::path> rustup_home;   // $RUSTUP_HOME, else $HOME/.rustup
  std::optional<std::string> toolchain;  // the pinned toolchain's name
  std::string toolchain_origin;          // "cargo +nightly", "/p/rust-toolchain.toml", ...

  // `project_dir`: where a rust-toolchain.toml (or rust-toolchain) is looked
  // for, in it and its parents (none when empty).
  static RustcSearch from_environment(const std::optional<fs::path>& hint, const fs::path& project_dir = {});
};

// The toolchain a rust-toolchain.toml or legacy rust-toolchain file names
// (its `channel`), read from `dir` upwards as rustup does; nullopt when none.
std::optional<std::pair<std::string, fs::path>> pinned_toolchain(const fs::path& dir);

// Run the probes (each a short rustc invocation, ~0.5 s together), or take
// their answers from the memo directory when one is set and holds them for
// this exact rustc binary (path, size, mtime).
RustcFacts probe_rustc(const RustcSearch& search);

// Where builds remember probe answers (the cache directory's probes/); nullopt
// (the default, and doctor's choice) probes every time.
void set_probe_memo_dir(std::optional<fs::path> dir);

// probe_rustc + rust_toolchain_from, remembered per process and rustc.
Result<RustToolchain> find_rust_toolchain(const std::optional<fs::path>& hint, const fs::path& project_dir = {});

}  // namespace ob::toolchain::rust
