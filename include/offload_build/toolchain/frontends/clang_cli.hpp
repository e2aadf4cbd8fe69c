// The clang command line as a launcher sees it (`offload-build clang++ ARGS`):
// parse an argv into a CompileRequest (command_line.hpp) that offload-build
// splits into per-target device passes, a package and a host pass, a
// one-step build or an offload link, or say why the command must run
// unchanged (preprocessing, no offload flags, options offload-build does not
// know). The launcher does not call it: it asks the clang Frontend
// (frontend.hpp). See docs/LAUNCHER.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/manifest/target.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::clang_cli {

namespace fs = std::filesystem;

// The launcher's words (command_line.hpp), as clang's command line fills them.
using frontend::Arg;
using frontend::ArgKind;
using frontend::BuildParsed;
using frontend::BuildRequest;
using frontend::CompileRequest;
using frontend::DepRequest;
using frontend::DriverArgv;
using frontend::LinkParsed;
using frontend::LinkRequest;
using frontend::Parsed;
namespace unchanged = frontend::unchanged;

// `token` named as `cache stats` counts it: up to and including its first '=',
// at most 64 bytes (a joined value would make every compile's name its own).
std::string option_name(std::string_view token);

// Classify `argv` (argv[0] the compiler, response files already expanded).
// Pure: reads no file and runs nothing.
Parsed parse(const std::vector<std::string>& argv);
// The same command line as a compile the launcher caches as one job, as
// ccache does (plain_compile.hpp): a -c of one C or C++ source to an object
// whose every option the table keys (offload or not, any targets but
// `native`), with no optimization record or -save-temps; else why not.
Parsed parse_plain(const std::vector<std::string>& argv);

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
  // Where a directory found without default configuration files is
  // remembered (the cache's probes/, probe::remember); none: listed each time.
  std::optional<fs::path> memo;
};
// What the driver `compiler` (a path) reads besides its argv: its
// directories (default configuration files), CCC_OVERRIDE_OPTIONS,
// CLANG_NO_DEFAULT_CONFIG, from this process's environment.
DriverEnvironment driver_environment(const fs::path& compiler);
// The command line the driver works on (DriverArgv): nullopt when a
// response or configuration file cannot be found or read, or
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

// An OpenMP offload link (LinkRequest), or why not.
LinkParsed parse_link(const std::vector<std::string>& argv);

// A one-step build (BuildRequest), or why not (one_step: it is one).
BuildParsed parse_build(const std::vector<std::string>& argv);

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

}  // namespace ob::toolchain::clang_cli
