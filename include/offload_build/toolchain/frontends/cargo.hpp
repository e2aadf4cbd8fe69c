// The cargo side of Rust offload (`offload-build cargo build|run`): reading
// `cargo metadata` and cargo's JSON messages, and the exact argv and environment
// of the device pass (`cargo rustc --lib` per target, in its own target dir) and
// of the host pass (`cargo build` told where the embedded images are). Pure:
// src/run/cargo_build.cpp runs the commands.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::cargo {

namespace fs = std::filesystem;

using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

// A package from `cargo metadata`: the one offload-build builds, or a local
// crate it depends on that defines kernels.
struct Package {
  std::string name;
  std::string id;
  fs::path manifest_path;
  std::optional<std::string> lib;     // the library target's crate name: the device crate
  fs::path lib_root;                  // its crate root (src/lib.rs)
  std::vector<std::string> bins;
  fs::path target_directory;
  fs::path workspace_root;
  std::vector<std::string> targets;   // [package.metadata.offload] targets
  std::string device_cfg = "offload_device";  // [package.metadata.offload] device_cfg
  // A member of the workspace (else a path dependency outside it, for which
  // cargo takes no --features: its device pass gets cargo's own resolution).
  bool member = true;
};

// Which packages a cargo command builds (-p, --workspace, --exclude).
struct Selection {
  std::vector<std::string> packages;  // -p / --package, each
  bool workspace = false;             // --workspace / --all
  std::vector<std::string> exclude;   // --exclude
  std::vector<std::string> bins;      // --bin, each: only the packages with such a program
};

// The workspace members cargo builds, as cargo picks them: each `-p NAME`;
// every member but --exclude with --workspace; else the one whose Cargo.toml
// is in `project_dir`; else (a workspace root) the default-members, all
// members when it names none; with --bin, only those of them that have such
// a program (cargo builds no other). Programs first. Errors name what to pass.
Result<std::vector<Package>> select_packages(std::string_view json, const fs::path& project_dir,
                                            const Selection& selection);

// The local packages (path dependencies and workspace members, not registry or
// git ones) with a library target that `chosen` depends on, directly or not,
// from the dependency graph ("resolve") of the same `cargo metadata` output;
// sorted by name, `chosen` itself not included. Their target directory is
// `chosen`'s: every device pass shares it.
std::vector<Package> local_dependencies(std::string_view json, const Package& chosen);
// The local (path) dependencies `chosen` declares optional that this
// resolution leaves out (`kern = { path = ..., optional = true }` without the
// feature that enables it): "kern", sorted.
std::vector<std::string> inactive_optional_dependencies(std::string_view json, const Package& chosen);
// `s` split on spaces, empty words dropped (how cargo reads RUSTFLAGS).
std::vector<std::string> split_spaces(const std::string& s);

// One `compiler-artifact` message of cargo's JSON output.
struct Artifact {
  std::string package_id;
  std::vector<std::string> kinds;      // "lib", "bin", ...
  std::vector<fs::path> filenames;
  std::optional<fs::path> executable;
  bool fresh = false;
  std::string target_name;  // the target's ("kern", "app", "build-script-build")
  bool test = false;        // built as a test harness (profile.test)
  fs::path manifest_path;   // its package's Cargo.toml
  fs::path src_path;        // the target's crate root
};
// nullopt for any other line (other messages, text).
std::optional<Artifact> parse_artifact(std::string_view line);
// The MIR rustc wrote for an artifact of the host pass (host_mir_emits):
// `deps/NAME-HASH.mir` beside a library's `deps/libNAME-HASH.rlib`, a test's
// `deps/NAME-HASH`, or the file a program's uplifted copy is a link of;
// nullopt when there is none (a build script, a proc macro).
std::optional<fs::path> artifact_mir(const Artifact& a);
// "build-finished" with its success flag; nullopt for any other line.
std::optional<bool> parse_build_finished(std::string_view line);

// One rustc diagnostic of cargo's JSON (a `compiler-message`), as the build
// passes get them: rendered by rustc, with ANSI colours
// (json-diagnostic-rendered-ansi, message_format()).
struct Diagnostic {
  std::string unit;      // unit_key() of its package and target
  std::string level;     // "warning", "error", "note", "failure-note", ...
  std::string rendered;  // as rustc wrote it, ending in a newline
  std::string plain;     // the same without colours
  // The same from every pass that compiles the code: level, lint, message and
  // primary spans. Not the rendering: rustc adds notes to a lint's first
  // warning in a crate ("`#[warn(unused_variables)]` on by default"), which
  // is another one in another pass.
  std::string key;
  bool fixable = false;  // a machine-applicable suggestion (cargo fix applies it)
};
// nullopt for any other line, and for a message without a rendering.
std::optional<Diagnostic> parse_diagnostic(std::string_view line);
// The unit a message or artifact is of: package id, target name and kinds.
std::string unit_key(const std::string& package_id, const std::string& target_name,
                     const std::vector<std::string>& kinds);
// A unit's warnings as cargo counts them for its summary: all it got, those
// not printed because this build printed them already, and the fixable ones
// of those printed.
struct WarningCount {
  int total = 0, duplicates = 0, fixable = 0;
};
// cargo's line after a unit's warnings, without "warning: ": "`kern` (lib)
// generated 2 warnings (1 duplicate)", with cargo's `cargo fix` hint for a
// local package's fixable ones (`cargo clippy --fix` for clippy's).
std::string warning_summary(const Artifact& unit, const WarningCount& count, bool clippy = false);
// The line `cargo test --no-run` prints for a test executable it built
// (cargo's concise form): "  Executable unittests src/lib.rs
// (target/debug/deps/kern-HASH)", an integration test by its file alone
// ("tests/it.rs (...)"), the program's path relative to `cwd` when under it;
// "Executable" painted as cargo does when `colour`. nullopt for an artifact
// that is not a test executable.
std::optional<std::string> executable_line(const Artifact& a, const fs::path& cwd, bool colour);
// "warning: `text`", "warning:" painted as cargo does when `colour`.
std::string warning_line(const std::string& text, bool colour);
// A line of cargo's stderr that is a build script's warning
// (`cargo::warning=`), which cargo prints itself: "warning: kern@0.1.0: text"
// (colours and carriage returns aside), as that text; nullopt for any other.
std::optional<std::string> script_warning(std::string_view line);

// The user's cargo arguments, sorted by who gets them.
struct UserArgs {
  std::string command = "build";      // the host pass's: build (for run too), test, check, clippy
  std::vector<std::string> all;       // everything, for the host pass
  std::vector<std::string> after;     // after `--` for test (the harness's) and check|clippy (the lints')
  std::vector<std::string> shared;    // profile, manifest path, lock, verbosity, --config: both passes
  std::vector<std::string> features;  // --features, -F, --all-features, --no-default-features: the host
                                      // pass's; the device pass gets what cargo resolved from them
  Selection selection;
  // The package the host pass names with `-p` when the user selected none
  // (the one in the directory offload-build runs in); nullopt: cargo picks.
  std::optional<std::string> implied_package;
  // --message-format values (comma-separated ones split), not in `all`: each
  // pass gets one --message-format that keeps the JSON offload-build reads
  // and shows the rest as the user asked (message_format()).
  std::vector<std::string> message_format;
  std::optional<std::string> target_dir;  // --target-dir, as given
  std::string profile = "dev";        // from --release, -r, --profile
  bool has_target = false;            // --target given: the host pass keeps it
};
UserArgs split_user_args(const std::vector<std::string>& args);
// The user's --locked and --frozen: every cargo call gets them, so that none
// rewrites an out-of-date Cargo.lock (cargo metadata included).
std::vector<std::string> lock_flags(const UserArgs& user);
// `user` building exactly `packages` (-p each; its own -p, --workspace,
// --all and --exclude left out): one host pass of a part of the selection.
UserArgs for_packages(const UserArgs& user, const std::vector<std::string>& packages);

// The profile a device pass builds with: the user's, but for test and bench,
// which `cargo rustc` would build as a test harness: offload-test and
// offload-bench, which inherit them (given with --config).
std::string device_profile(const UserArgs& user);

// CARGO_PROFILE_<NAME>_LTO for a profile ("release" -> CARGO_PROFILE_RELEASE_LTO).
std::string profile_lto_var(const std::string& profile);

// Where the device pass of a crate for a target writes:
// <target dir>/offload-device/<short>/<crate>-<config>, `config` naming one
// configuration of it (device_config: what cargo resolved for it, the
// rustflags, which workspace), so that no other feature set, profile or
// workspace sharing the target dir ever reuses its archive or image. Each pass
// its own, so that the passes of different crates and targets run at once
// (cargo locks a target dir). `config` "": the plain name (the unit-graph probe).
fs::path device_target_dir(const Package& p, const manifest::Target& t, const std::string& config);
// A GPU's device pass emits its image (rustc --emit=llvm-bc=PATH) inside that
// dir; the host device's pass leaves its archive where cargo puts it
// (device_archive: from the pass's `compiler-artifact` message), and the image
// link writes device_image() there.
fs::path device_output(const Package& p, const manifest::Target& t, const std::string& config);
fs::path device_image(const Package& p, const manifest::Target& t, const std::string& config);
std::optional<fs::path> device_archive(const std::vector<std::string>& messages, const Package& p);

// One configuration of a device pass, as digests (hex): `portable` of the
// pass's unit graph (`cargo rustc --unit-graph`: every unit's package, target,
// mode, features and resolved profile, which holds [profile.*] of the
// workspace root, [profile.*.package.*] overrides and CARGO_PROFILE_*), with
// the workspace root and cargo's home written as placeholders, and of the
// rustflags: the same in every checkout (the cache key's); `place`: that and
// where the package and the target dir are (the directory's name).
struct DeviceConfig {
  std::string portable, place;
};
DeviceConfig device_config(std::string_view unit_graph, const Package& p, const std::vector<std::string>& rustflags);

// What a device pass read, as a Make depfile for the job cache (rustc's
// dep-info format): cargo's dep-info beside the archive, whose rule lists (`lib<crate>.d`: the sources of the crate and of its local
// dependencies that rustc read under the device cfg, include!d files, build
// scripts' rerun-if-changed inputs), and one `# env-dep:NAME` line per
// environment variable read: rustc's env-deps (`env!`, `option_env!`) of the
// crates compiled, and build scripts' rerun-if-env-changed. Left out: what
// cargo sets itself (CARGO_*, OUT_DIR, a build script's rustc-env) and
// `config_env` (cargo's [env] table, keyed as configuration). nullopt when
// cargo's dep-info is missing.
std::optional<std::string> device_depfile(const fs::path& archive, const std::vector<std::string>& config_env);
// Packages and embedded objects: <target dir>/offload/<profile>.
fs::path offload_dir(const Package& p, const std::string& profile);
// Where the package of one set of device images and its embedded object go:
// offload_dir/images-<digest of `configs`> (each image's DeviceConfig::place
// with its crate and target), so that two configurations (features, profile,
// the programs of a workspace that link different kernel crates) never share
// one, also when two builds run at once.
fs::path images_dir(const Package& p, const std::string& profile, const std::vector<std::string>& configs);

struct Invocation {
  std::vector<std::string> argv;
  Env env;
  // The user asked for cargo's JSON messages (--message-format=json...): every
  // one goes to stdout too, not only the ones offload-build reads.
  bool echo_json = false;
  // cargo's diagnostics come as JSON (compiler-message, rendered with colours):
  // offload-build prints each on stderr, once per build however many passes
  // compile its code, as cargo would (exec/cargo_run.hpp: Diagnostics);
  // `colour`: with rustc's colours, else without; `quiet` (-q): without
  // cargo's summary lines, as cargo.
  bool render = false;
  bool colour = false;
  bool quiet = false;
};

// The --message-format a build pass runs with: json-diagnostic-rendered-ansi
// (offload-build prints the diagnostics: Invocation::render), with
// json-diagnostic-short for `short`; the user's own JSON values as given
// (json, json-diagnostic-*), which echo_json then passes on, but
// json-render-diagnostics, whose diagnostics offload-build renders (the other
// messages echoed). Multiple values and comma-separated lists are cargo's.
std::string message_format(const UserArgs& user);
bool wants_json(const UserArgs& user);
// A build pass's --message-format with echo_json, render, colour and quiet to match.
void set_message_format(Invocation& inv, const UserArgs& user);
// Whether rendered diagnostics keep their colours: cargo's --color WHEN
// (the last one given), else CARGO_TERM_COLOR, else whether stderr is a
// terminal (NO_COLOR, CLICOLOR_FORCE and TERM=dumb as util::decide_color).
bool diagnostics_colour(const UserArgs& user);

// The command as --dry-run shows it: env assignments, then argv, shell-quoted.
std::string display(const Invocation& inv);

// What the device pass of one crate builds, taken from what cargo resolved for
// the host pass (src/plan/cargo_resolve.cpp): the crate's features, and the
// rustflags cargo would give every crate for the device's triple.
struct DeviceInputs {
  // The features cargo enabled on the crate in the host pass (through the
  // package's declaration, --features, defaults): given as `--no-default-features
  // --features ...`. nullopt: the host pass does not build the crate; the
  // user's feature arguments are passed on as they are.
  std::optional<std::vector<std::string>> features;
  std::vector<std::string> rustflags;  // CARGO_ENCODED_RUSTFLAGS
  std::string config;                  // DeviceConfig::place; "" before it is known
  // Features unified across the workspace's members (cargo's
  // -Zfeature-unification, resolver.feature-unification = "workspace"): how a
  // crate below a direct dependency gets the features the host pass's
  // unification gives it, which no --features can name.
  bool unify_workspace = false;
};

// `cargo rustc --lib` for one target with the device cfg, in its own target dir,
// a fat-LTO staticlib (the profile's LTO setting) whatever the profile.
Invocation device_pass(const fs::path& cargo, const Toolchain& tc, const Package& p,
                       const UserArgs& user, const manifest::Target& t, const DeviceInputs& in = {});

// `cargo clean -p` of that pass's crate in its own target dir: run before the
// pass again when cargo calls it fresh but its output is gone.
std::vector<std::string> device_clean(const fs::path& cargo, const Package& p, const UserArgs& user,
                                      const manifest::Target& t, const std::string& config);

// One unit of `cargo build --unit-graph` (what cargo would compile, resolved).
struct Unit {
  std::string pkg_id;
  std::vector<std::string> kinds;  // the target's kinds: "lib", "bin", "staticlib", ...
  std::string platform;            // the triple; "" for the host (build scripts, proc macros)
  std::string mode;                // "build", "test", "run-custom-build", ...
  std::vector<std::string> features;
  std::string profile, opt_level;
  bool debug_assertions = false, overflow_checks = false;
  std::vector<size_t> dependencies;  // indices of the units it depends on
};
Result<std::vector<Unit>> parse_unit_graph(std::string_view json);
// The unit that compiles package `id`'s library for `triple` (any library kind), if any.
const Unit* library_unit(const std::vector<Unit>& units, const std::string& id, const std::string& triple);

// The environment variables cargo reads rustflags from (besides its config files).
struct RustflagsEnv {
  std::optional<std::string> encoded, plain, build, target;  // CARGO_ENCODED_RUSTFLAGS, RUSTFLAGS,
                                                            // CARGO_BUILD_RUSTFLAGS, CARGO_TARGET_<T>_RUSTFLAGS
  static RustflagsEnv from_environment(const std::string& triple);
};
// The flags cargo gives every crate it compiles for `triple`, in cargo's own
// precedence: CARGO_ENCODED_RUSTFLAGS, else RUSTFLAGS, else target.<triple>.rustflags
// (config, then CARGO_TARGET_<TRIPLE>_RUSTFLAGS), else build.rustflags (config,
// then CARGO_BUILD_RUSTFLAGS). `config` is `cargo config get --format json`'s
// output (the merged config files and --config values). A `target.'cfg(...)'`
// table with rustflags is an error: offload-build does not evaluate cfg keys.
// `origin` says where the flags came from ("" when there are none).
struct Rustflags {
  std::vector<std::string> flags;
  std::string origin;
};
Result<Rustflags> effective_rustflags(std::string_view config, const std::string& triple, const RustflagsEnv& env);

// Whether the user's rustflags choose LLVM's lld for the link (-fuse-ld=lld,
// --ld-path=.../ld.lld): the host pass then keeps lld from collecting the
// offload entries' section (-z nostart-stop-gc), which clang-linker-wrapper's
// image registration reads through __start_/__stop_llvm_offload_entries.
bool links_with_lld(const std::vector<std::string>& rustflags);

// `cargo build` (`cargo test` for user.command test) with RUSTFLAGS that link the images (`-Zoffload`, clang, the
// embedded object or host.out) and fat LTO for the profile. `user_rustflags` are
// the user's own (RUSTFLAGS), kept first.
Invocation host_pass(const fs::path& cargo, const Toolchain& tc, const Package& p,
                     const UserArgs& user, const std::vector<manifest::Target>& targets,
                     const std::optional<fs::path>& embedded_object,
                     const std::optional<fs::path>& native_host_out,
                     const std::vector<std::string>& user_rustflags);

// `cargo check|clippy` of one kernel crate's device side for one target (the
// device cfg on, no image), in the device pass's target dir; user.after
// after `--`. `cargo_clippy` is the toolchain's cargo-clippy (run as
// `cargo-clippy clippy`, with CARGO naming the toolchain's cargo).
Invocation device_check(const fs::path& cargo, const fs::path& cargo_clippy, const Toolchain& tc,
                        const Package& p, const UserArgs& user, const manifest::Target& t, const DeviceInputs& in);
// `cargo check|clippy` of the package for the host (the device cfg known to check-cfg).
Invocation host_check(const fs::path& cargo, const fs::path& cargo_clippy, const Toolchain& tc, const Package& p,
                      const UserArgs& user, const std::vector<std::string>& user_rustflags);

// FNV-1a 64 of `bytes` as 16 hex digits: names the embedded object by content,
// so a new kernel changes the host pass's flags and cargo relinks.
std::string content_hash(std::string_view bytes);

}  // namespace ob::toolchain::cargo
