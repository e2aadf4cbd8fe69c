// The clang command line as a launcher sees it (`offload-build clang++ ARGS`):
// parse an argv into a typed CompileRequest that offload-build splits into
// per-target device passes, a package and a host pass, or say why the
// command must run unchanged (link steps, preprocessing, no offload flags,
// options offload-build does not know). See docs/LAUNCHER.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/manifest/target.hpp"
#include "offload_build/util/result.hpp"

namespace ob::clang_cli {

namespace fs = std::filesystem;

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

struct CompileRequest {
  std::string compiler;               // argv[0] as given
  std::vector<Arg> args;              // the rest, response files expanded
  std::string source;                 // as written
  Language language = Language::C;
  std::optional<std::string> output;  // -o as written; nullopt: <source stem>.o
  std::optional<DepRequest> deps;     // nullopt: no depfile requested
  std::vector<Target> targets;        // offload targets, in command-line order
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

  // The -o path as written, or clang's default (<source stem>.o in the cwd).
  std::string output_arg() const;
};

// Why a command runs unchanged, by kind: the counters `cache stats` shows
// (`pass_code`); the reason text says more.
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

struct Parsed {
  std::optional<CompileRequest> compile;  // set: split it
  std::string pass_reason;                // otherwise: why the compiler runs unchanged
  std::string pass_code;                  // and its kind (unchanged::k...)
  // For kOption: the option as spelled, its value left out ("-ftime-trace",
  // "-fsanitize=", "-Xclang -load"): what `cache stats` counts by name.
  std::string option;
};

// `token` named as `cache stats` counts it: up to and including its first '=',
// at most 64 bytes (a joined value would make every compile's name its own).
std::string option_name(std::string_view token);

// Classify `argv` (argv[0] the compiler, response files already expanded).
// Pure: reads no file and runs nothing.
Parsed parse(const std::vector<std::string>& argv);

// Expand @FILE arguments (recursively, GNU quoting as clang does on Linux),
// relative to `cwd`. nullopt when a response file cannot be read (missing,
// not a regular file, over kMaxResponseFile, nested more than 20 deep);
// `problem` then says which and why.
inline constexpr uint64_t kMaxResponseFile = uint64_t{64} << 20;  // 64 MiB
std::optional<std::vector<std::string>> expand_response_files(const std::vector<std::string>& argv,
                                                              const fs::path& cwd,
                                                              std::string* problem = nullptr);

// What the clang driver reads besides its argv (clang_cli_config.cpp).
struct DriverEnvironment {
  std::optional<std::string> override_options;  // CCC_OVERRIDE_OPTIONS
  bool no_default_config = false;               // CLANG_NO_DEFAULT_CONFIG is set
  std::vector<fs::path> binary_dirs;            // where the clang binary is (as found, real)
};
struct DriverArgv {
  // The command line the driver works on: response files expanded, each
  // --config file's arguments in its place (clang's order: before the
  // command line's, `$ARG` ones after), the --config options gone.
  std::vector<std::string> argv;
  std::vector<fs::path> config_files;  // read, in order
  // Set when the driver reads what this does not model (a default
  // configuration file may apply, CCC_OVERRIDE_OPTIONS edits the command
  // line): the compile runs unchanged, and stays local unless the edited
  // command line (apply_override_options) is offload-free.
  std::string doubt;
};
// nullopt when a response or configuration file cannot be found or read, or
// a configuration file names another (clang refuses it); `problem` says which.
std::optional<DriverArgv> driver_argv(const std::vector<std::string>& argv, const fs::path& cwd,
                                      const DriverEnvironment& env, std::string* problem = nullptr);
// `argv` edited as clang edits it by CCC_OVERRIDE_OPTIONS: '+X', '^X', 'xX',
// 'XX' (and '#' silencing it); nullopt for an edit that rewrites arguments
// ('s/a/b/', 'Ox'), which is not modeled.
std::optional<std::vector<std::string>> apply_override_options(std::vector<std::string> argv,
                                                               std::string_view edits);

// Split a response file's text into arguments (GNU rules: whitespace
// separates, '' and "" quote, backslash escapes).
std::vector<std::string> split_response_file(std::string_view text);

// An OpenMP offload link: `clang -fopenmp <targets> objects... -o program`
// (no source inputs, no -c/-S/-E/-shared), which clang runs through
// clang-linker-wrapper: device links, wrapping and the host link.
struct LinkRequest {
  std::string output;               // -o, as written
  std::vector<std::string> inputs;  // objects, archives, libraries named as files
};
struct LinkParsed {
  std::optional<LinkRequest> link;  // set: cache it
  std::string pass_reason;          // otherwise: why it runs unchanged
};
LinkParsed parse_link(const std::vector<std::string>& argv);

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
};
struct BuildParsed {
  std::optional<BuildRequest> build;  // set: split it
  bool one_step = false;  // an OpenMP offload compile-and-link, split or not
  std::string pass_reason;  // not split: why
};
BuildParsed parse_build(const std::vector<std::string>& argv);

// The compile of source `n` (of req.sources) to `object`: the caller's
// options without the other inputs, -o and the link-only options (-l, -L,
// -Wl,, -rpath..., which a compile would warn are unused), then -c SOURCE -o OBJECT.
std::vector<std::string> build_compile_argv(const BuildRequest& req, size_t n,
                                            const std::string& object);
// The link: the command with each source replaced by its object, in place.
std::vector<std::string> build_link_argv(const BuildRequest& req,
                                         const std::vector<std::string>& objects);

// What a command line writes (its -o FILE or -oFILE), for naming it; "" when none.
std::string output_arg(const std::vector<std::string>& argv);
// The link `argv` writing `out` instead of its -o, listing what it read in
// `depfile` (the linker's --dependency-file).
std::vector<std::string> link_writing(std::vector<std::string> argv, const std::string& out,
                                      const std::string& depfile);

// ccache's base_dir: `argv` with every absolute path under `base` (a whole
// argument, an option's joined value such as -I/abs/inc, or the value after
// "=") written relative to `cwd`, so the compile, its depfile and its key are
// the same in a checkout at another place. -f...-prefix-map= and
// -f...-compilation-dir= are left as given. An empty `base` changes nothing.
std::vector<std::string> relative_to_base(std::vector<std::string> argv, const fs::path& base,
                                          const fs::path& cwd);

// Whether `program` (a path or a name) names clang (clang, clang++, clang-22, ...).
bool is_clang(const fs::path& program);

// The driver mode clang takes from `program`'s name, as clang's driver does
// (a version suffix and a target prefix aside): "g++" for clang++, "cpp" for
// clang-cpp, "cl" for clang-cl, "flang" for flang, "gcc" for plain clang;
// empty for a name that is not a clang or flang driver.
std::string driver_mode(const fs::path& program);

// Whether `argv` (argv[0] the compiler, response files expanded) compiles no
// device code, so that another machine may run it (ccache's prefix_command:
// distcc, icecc): no offload option (-fopenmp-targets=, --offload-*,
// -foffload*, -Xopenmp-target, --cuda-*, -fembed-offload-object=, ...), no
// CUDA/HIP/SYCL language or source, and, for a compiler other than clang, no
// -fopenmp/-fopenacc (gcc compiles device code for its configured offload
// targets). Conservative: every token is looked at, values too, so a doubt
// keeps the compile local. Pure. (clang_cli_offload_free.cpp)
bool offload_free(const std::vector<std::string>& argv);

// The argv of each pass of a CompileRequest: frontend::Compile, made by the
// clang frontend's launcher_compile (frontend.hpp).

}  // namespace ob::clang_cli
