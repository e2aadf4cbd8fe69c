// What a compiler command line seen in launcher mode asks for, in the words
// every frontend uses: a compile to split (CompileRequest), a one-step
// compile-and-link (BuildRequest), an offload link (LinkRequest), or why it
// runs unchanged (Unchanged, its kind one of unchanged::k...). A frontend
// (frontend.hpp) makes them from its driver's command line (clang_cli.cpp
// for clang, flang.cpp for flang); the launcher (src/run/launcher*.cpp)
// works with them and knows no driver option. docs/LAUNCHER.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/manifest/target.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::toolchain::frontend {

namespace fs = std::filesystem;

// Why a command runs unchanged, by kind: the counters `cache stats` shows
// (Unchanged::code); the reason text says more.
namespace unchanged {
inline constexpr const char* kNotCompile = "not a compile to an object";  // link, -E, -S, --version...
inline constexpr const char* kNotOffload = "not an offload compile";      // no -fopenmp or targets, not C/C++
inline constexpr const char* kOption = "unsupported option";              // an option the split cannot carry
inline constexpr const char* kTargets = "unsupported targets";            // a triple or combination not modeled
inline constexpr const char* kNoGpu = "no GPU for native";                // --offload-arch=native found none
inline constexpr const char* kCompiler = "not clang";                     // or not found, or no LLVM next to it
inline constexpr const char* kPaths = "missing directory or file";        // output dir, response file, cwd
inline constexpr const char* kDisabled = "OFFLOAD_BUILD_DISABLE";
inline constexpr const char* kOneStep = "one-step build not split";  // compile and link: -x, mixed languages...
inline constexpr const char* kFailed = "compile error";  // a pass failed: the compiler reports it
inline constexpr const char* kInternal = "internal error";  // offload-build's own: the compiler runs unchanged
}  // namespace unchanged

// Why a command runs unchanged: `code`, its kind, is what `cache stats`
// counts (unchanged::k...); `reason` says more.
struct Unchanged {
  std::string reason;
  std::string code;
  // kOption: the option as spelled, its value left out ("-ftime-trace",
  // "-fsanitize=", "-Xclang -load"): what `cache stats` counts by name.
  std::string option;
  // kOption: the command is an offload compile (-fopenmp with offload
  // targets), whose device code the option keeps unsplit and uncached: said
  // once per build without -v.
  bool offload = false;
  // Run with the paths under the base directories made relative (as a split
  // compile's are): what it writes names its inputs as the command does
  // (flang -E's #line, which a compile of its output writes into the object).
  bool relative_paths = false;
};

// What each argument (one token, or an option and its value) does.
enum class ArgKind {
  Common,          // every pass gets it as written (-I, -D, -O2, -fopenmp, -c, -nogpulib, ...)
  Input,           // the source file
  Output,          // -o FILE
  DepMode,         // -MD, -MMD
  DepFile,         // -MF FILE
  DepTarget,       // -MT T, -MQ T
  DepPhony,        // -MP
  OffloadTargets,  // -fopenmp-targets=, --offload-targets=  (host pass only)
  OffloadArch,     // --offload-arch=                         (host pass only)
  XOpenmpTarget,   // -Xopenmp-target[=TRIPLE] ARG            (device pass of TRIPLE)
  XArch,           // -Xarch_NAME ARG: host, device or an arch (passes it applies to)
  RecordFile,      // -foptimization-record-file=F (the host pass's record; see opt_record)
  // The device passes of one family (`triple`) only: --libomptarget-nvptx-bc-path=DIR (its
  // device runtime), -Xcuda-ptxas ARG (ptxas's; a host pass would warn it is unused).
  DeviceFamily,
};

struct Arg {
  ArgKind kind = ArgKind::Common;
  std::vector<std::string> tokens;  // as written: one token, or option + value
  std::string value;                // the value: file, list, target name, forwarded arg;
                                    // XArch: NAME
  std::string triple;               // XOpenmpTarget: TRIPLE of the `=TRIPLE` form, else empty
};

// The dependency file the caller asked for (-MD/-MMD [-MF F] [-MT T]... [-MP]).
struct DepRequest {
  bool user_headers_only = false;    // -MMD
  std::optional<std::string> file;   // -MF, as written
  std::vector<std::string> targets;  // joined spellings, in order: "-MTname", "-MQname"
  bool phony = false;                // -MP
};

// An offload compile (-c of one source) to split into its device passes,
// package and host pass (Frontend::launcher_compile gives their argv).
struct CompileRequest {
  std::string compiler;               // argv[0] as given
  std::vector<Arg> args;              // the rest, response files expanded
  std::string source;                 // as written
  manifest::Language language = manifest::Language::C;
  std::optional<std::string> output;  // -o as written; nullopt: <source stem>.o
  std::optional<DepRequest> deps;     // nullopt: no depfile requested
  std::vector<manifest::Target> targets;        // offload targets, in command-line order
  // Targets to detect on this machine, like clang's `native`: "" for any GPU
  // (--offload-arch=native), or the triple a -fopenmp-targets entry named
  // without an arch.
  std::vector<std::string> native;
  bool debug_info = false;            // some -g option (and no later -g0)
  bool sets_compilation_dir = false;  // -fdebug-compilation-dir= / -ffile-compilation-dir=
  // Source locations tracked without debug info (-Rpass*=, optimization
  // records, -fprofile-sample-use=, -fstack-usage): the IR names the
  // compilation directory, as debug info does.
  bool tracks_locations = false;
  // -fsave-optimization-record and friends: the record file as clang names
  // it (-foptimization-record-file=, else the -o path with its extension
  // replaced by .opt.FORMAT). Every cc1 of the compile writes that one file
  // and the host compile, the last, wins; the split's host pass writes it,
  // the other passes write theirs into the work directory.
  std::optional<std::string> opt_record;
  // -save-temps[=cwd|obj]: the driver's temps pipeline, run as its own commands.
  bool save_temps = false;
  // Files options name that the compile reads and no depfile lists
  // (-fprofile-use=, -fsanitize-ignorelist=, -fplugin=, ...; clang_options.hpp),
  // as written: every pass's key and the whole compile's hold their content.
  // The launcher runs the compile unchanged when one is not a readable file.
  std::vector<std::string> keyed_files;
  // -mllvm values that may name a file (-mllvm -x=VALUE): the launcher runs
  // the compile unchanged when a file or directory of that name exists.
  std::vector<std::string> maybe_files;
  // A compile cached as one job (plain_compile.hpp): whether its object names
  // OpenMP target regions after the files' identities (clang's -fopenmp),
  // so that it runs with stable kernel names. A split compile always does.
  bool names_kernels = true;
  // --cuda-path=DIR as written (the last): the CUDA installation whose ptxas
  // and libdevice the nvptx passes use, keyed as the toolchain's.
  std::optional<std::string> cuda_path;

  // The -o path as written, or clang's default (<source stem>.o in the cwd).
  std::string output_arg() const;
  // Why the files its options name (run in `cwd`) are not usable: a keyed
  // file that is not a readable regular file, an -mllvm value naming an
  // existing file (not keyed); nullopt when they are. Checked before any
  // cache lookup; the compiler reports a missing or bad file itself.
  std::optional<Unchanged> unusable_files(const fs::path& cwd) const;
  // clang's `native`: the GPUs offload-arch finds on this machine (asked
  // once, remembered under `memo`) added to `targets`. false when a native
  // target found none.
  bool resolve_natives(const Toolchain& tc, const std::optional<fs::path>& memo);
};

// A command line parsed as a compile: a compile to split, or why not.
struct Parsed {
  std::optional<CompileRequest> compile;  // set: split it
  std::string pass_reason;                // otherwise: why the compiler runs unchanged
  std::string pass_code;                  // and its kind (unchanged::k...)
  // For kOption: the option as spelled (Unchanged::option).
  std::string option;
  bool offload = false;  // Unchanged::offload
  bool relative_paths = false;  // Unchanged::relative_paths
  Unchanged unchanged() const { return {pass_reason, pass_code, option, offload, relative_paths}; }
};

// An OpenMP offload link: `clang -fopenmp <targets> objects... -o program`
// (no source inputs, no -c/-S/-E/-shared), which clang runs through
// clang-linker-wrapper: device links, wrapping and the host link.
struct LinkRequest {
  std::vector<std::string> argv;    // the command (argv[0] the compiler)
  std::string output;               // -o, as written
  std::vector<std::string> inputs;  // objects, archives, libraries named as files
  // The link writing `out` instead of its -o, listing what it read in
  // `depfile` (the linker's dependency file).
  std::vector<std::string> writing(const std::string& out, const std::string& depfile) const;
};
struct LinkParsed {
  std::optional<LinkRequest> link;  // set: cache it
  std::string pass_reason;          // otherwise: why it runs unchanged
};

// A one-step build: `clang -fopenmp <targets> [options] a.c b.c [x.o -lm] [-o prog]`
// (no -c), which clang runs as a compile of each source to a temporary
// object, then the link. Split when every source is C, or every one C++, by
// its extension, with no -x, stdin, dependency files, -save-temps or
// optimization records (those name files after each compile).
struct BuildRequest {
  std::vector<std::string> argv;     // the command (argv[0] the compiler)
  std::vector<size_t> sources;       // their indexes in argv, in order
  std::vector<bool> link_only;       // per argv index: dropped from the compiles
  std::optional<std::string> output;  // -o as written; nullopt: a.out
  std::string output_arg() const { return output.value_or("a.out"); }
  // The compile of source `n` (of sources) to `object`: the caller's
  // options without the other inputs, -o and the link-only options (-l, -L,
  // -Wl,, -rpath..., which a compile would warn are unused), then -c SOURCE -o OBJECT.
  std::vector<std::string> compile_argv(size_t n, const std::string& object) const;
  // The link: the command with each source replaced by its object, in place.
  std::vector<std::string> link_argv(const std::vector<std::string>& objects) const;
};
struct BuildParsed {
  std::optional<BuildRequest> build;  // set: split it
  bool one_step = false;  // an OpenMP offload compile-and-link, split or not
  std::string pass_reason;  // not split: why
};

// The command line a driver works on.
struct DriverArgv {
  // Response files expanded, each --config file's arguments in its place
  // (clang's order: before the command line's, `$ARG` ones after), the
  // --config options gone.
  std::vector<std::string> argv;
  std::vector<fs::path> config_files;  // read, in order
  // Set when the driver reads what this does not model (a default
  // configuration file may apply, CCC_OVERRIDE_OPTIONS edits the command
  // line): the compile runs unchanged, and stays local unless the edited
  // command line is offload-free.
  std::string doubt;
};

// What a command line writes (its -o FILE or -oFILE), for naming it; "" when none.
std::string output_arg(const std::vector<std::string>& argv);

// Whether `command` (argv[0] the compiler as given, found at `compiler`, run
// in `cwd`) compiles no device code, so that another machine may run it
// (ccache's prefix_command: distcc, icecc): judged on the command line the
// driver works on (response and configuration files read,
// CCC_OVERRIDE_OPTIONS applied). In doubt (an edit not modeled, a default
// configuration file that may apply, a file that cannot be read): false.
bool compiles_no_device_code(const std::vector<std::string>& command, const fs::path& compiler,
                             const fs::path& cwd);

}  // namespace ob::toolchain::frontend
