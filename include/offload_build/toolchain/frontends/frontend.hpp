// The seam between the planners, the launcher and a compiler: what an
// offload compile's jobs run, for a manifest's source and for a compile seen
// in launcher mode alike. The launcher asks the registered frontends which
// one drives a command (recognize) and has it read the command line into
// command_line.hpp's words (a compile to split, a one-step build, a link, or
// why it runs unchanged); it knows no driver option. The planners
// (src/plan/planner.cpp for a manifest, launcher_planner.cpp for a launcher
// compile) lay out the jobs and their files, compile_planner.cpp making one
// compile's; a Frontend's Compile says each pass's argv, the Frontend the
// package's and the link's, and which driver listings it can split into the
// single-parse form. Adding a compiler means one Frontend and its Compile in
// its own file, registered in clang_frontend.cpp's list (docs/ARCHITECTURE.md).
// Registered: clang's OpenMP offload (C, C++) and flang's (Fortran, flang.cpp).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/toolchain/frontends/fortran_scan.hpp"
#include "offload_build/toolchain/frontends/scan_deps.hpp"
#include "offload_build/toolchain/frontends/frontend_base.hpp"
#include "offload_build/toolchain/frontends/single_parse.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::frontend {

namespace fs = std::filesystem;
using Argv = std::vector<std::string>;
using OptionFiles = clang_openmp::OptionFiles;

// What the passes of a compile read and write that no depfile lists (flang
// writes none): the modules and included files of a scan (fortran_scan.hpp).
struct ModuleFiles {
  fs::path module_dir;          // absolute: where the passes write .mod files (-module-dir)
  std::vector<fs::path> search;  // absolute: where else flang finds a .mod file (-I, its directory)
  fortran::Scan scan;
  // The source's name flang writes into the objects (for its runtime's
  // messages): an absolute #line's file as is; else (`in_working_dir`) the
  // name of the working directory (its $PWD when that is it, else its path)
  // joined to a relative #line's file or the source as argv names it. Keyed:
  // it is in no argv and no input (plan::Job::names_working_dir).
  std::string source_name;
  bool in_working_dir = false;
};

// The passes of one compile (one translation unit, its options fixed), each
// as a driver command. Paths are written into argv as given (the planner
// makes them relative to the directory the jobs run in).
class Compile {
 public:
  virtual ~Compile() = default;
  // The device pass for `target` in the driver's form (it parses the source
  // for the host and for the target), writing `out` and listing what it read
  // in `depfile`. `callers_depfile`: `depfile` is the one the caller asked
  // for (launcher mode), written with the caller's dependency options.
  virtual Argv device(const manifest::Target& target, const std::string& out, const std::string& depfile,
                      bool callers_depfile) const = 0;
  // The host pass, embedding `package` into the object `out`.
  virtual Argv host(const std::string& package, const std::string& out,
                    const std::string& depfile) const = 0;
  // Single parse: the host pass's parse alone, writing unoptimized IR to `out`.
  virtual Argv host_ir(const std::string& out, const std::string& depfile) const = 0;
  // Single parse: the host codegen from `host_ir`, embedding `package`.
  virtual Argv host_codegen(const std::string& host_ir, const std::string& package,
                            const std::string& out) const = 0;
  // Whether the package records each device pass's target features (offload LTO).
  virtual bool offload_lto() const = 0;
  // Single parse: the host parse and the host codegen are the driver
  // listing's own commands (DevicePass::host_ir; the listing of
  // host_codegen()) rather than host_ir()'s and host_codegen()'s driver
  // commands: flang's driver is a process of its own (~100 ms), clang's runs
  // its cc1 inside.
  virtual bool host_parse_listed() const { return false; }
  // Why these passes keep the two-parse form whatever the driver lists (a
  // single parse could give other bytes); nullopt when it may be split.
  virtual std::optional<std::string> two_parse_reason() const { return std::nullopt; }
  // A frontend whose passes list no files read (flang writes no depfile):
  // what they read and write besides the source, from a scan; the planners
  // order, declare and key the files. nullptr when depfiles list them.
  virtual const ModuleFiles* module_files() const { return nullptr; }
};

class Frontend : public FrontendBase {
 public:
  // name() and compiles(lang): FrontendBase's.
  // Launcher mode: whether `program` (argv[0] as written, or its real path)
  // is this frontend's compiler driver.
  virtual bool recognizes(const fs::path& program) const = 0;
  // Launcher mode: the driver's command line (response and configuration
  // files read: driver_argv) as a compile to split, or why it runs unchanged.
  virtual Parsed parse(const Argv& argv) const = 0;
  // Launcher mode: that command line as a one-step compile and link
  // (BuildParsed::one_step), and as an offload link. By default neither:
  // only clang's are split and cached.
  virtual BuildParsed parse_build(const Argv& argv) const;
  virtual LinkParsed parse_link(const Argv& argv) const;
  // Whether each pass writes a depfile (-MD -MF) listing every file it read.
  // When not, the passes have no depfile and the launcher keeps no whole entry.
  virtual bool lists_reads() const { return true; }
  // The command line the driver `compiler` (where argv[0] was found) works
  // on, run in `cwd`: response and configuration files read, as the
  // environment (CCC_OVERRIDE_OPTIONS, CLANG_NO_DEFAULT_CONFIG) says;
  // nullopt with `problem` when a file cannot be read. And its paths under
  // `base` made relative (ccache's base_dir). Both are the clang driver's
  // (flang's driver is clang's too).
  // `memo`: where the answers that need a directory listed are remembered.
  virtual std::optional<DriverArgv> driver_argv(const Argv& argv, const fs::path& cwd,
                                                const fs::path& compiler, std::string* problem,
                                                const std::optional<fs::path>& memo = std::nullopt) const;
  Argv relative_to_base(Argv argv, const fs::path& base, const fs::path& cwd) const;
  // A manifest's options (flags, host_flags, device_flags) judged as this
  // frontend's launcher compile would read them: the files they name, or why
  // its sources' passes cannot be cached. By default clang's.
  virtual OptionFiles option_files(const manifest::Manifest& m) const { return clang_openmp::option_files(m); }
  // A manifest's source: the manifest's options, targets and toolchain.
  // `src_arg`: the source as argv names it.
  virtual std::unique_ptr<Compile> manifest_compile(const Toolchain& tc, const manifest::Manifest& m,
                                                    const manifest::SourceFile& src,
                                                    const fs::path& src_arg) const = 0;
  // A compile seen in launcher mode, run in `cwd` (absolute). `record`: where
  // the host pass writes the caller's optimization record, as argv names it
  // ("" when none was asked for).
  virtual std::unique_ptr<Compile> launcher_compile(const CompileRequest& req,
                                                    const fs::path& cwd,
                                                    const std::string& record) const = 0;
  // The package of one TU's device images.
  virtual Argv package(const Toolchain& tc, const std::vector<Image>& images,
                       const fs::path& out) const = 0;
  // A manifest's program from its host objects.
  virtual Argv link(const Toolchain& tc, const manifest::Manifest& m, const std::vector<fs::path>& objects,
                    const fs::path& out, const fs::path& depfile) const = 0;
  // The shapes of driver listing this frontend splits: a device pass's
  // `-###` listing (for the TU paths `probed`) as its single-parse commands,
  // or why it keeps the two-parse form. `shared`: the pass serves other TUs.
  virtual Result<single_parse::DevicePass> split_device_pass(
      const std::vector<Argv>& listing, const single_parse::UnitPaths& probed,
      bool shared) const = 0;

  // What the cache and remote execution ask of a command this frontend
  // planned (a driver or pass line): by default the clang driver's answers
  // (flang's driver shares its options). The first option whose meaning is
  // this machine's (-march=native, --offload-arch=native...), as spelled.
  virtual std::optional<std::string> machine_dependent_option(const Argv& argv) const;
  // The command changed to write a Make depfile naming every file it reads
  // to `depfile` and to compile nothing (remote execution's dependency scan);
  // nullopt: not a compile it can scan.
  virtual std::optional<Argv> dependency_scan(const Argv& argv, const std::string& depfile) const;
  // That scan as a clang-scan-deps database entry, nullopt when it runs alone.
  virtual std::optional<scan_deps::Entry> batch_scan(const Argv& scan) const;
};

// What a manifest is checked with (load_manifest's options): its option
// lists must not select offload targets (clang_flags::target_flag_problem).
manifest::ManifestOptions manifest_options();

// The frontend compiling `lang`: C and C++ are clang's OpenMP offload,
// Fortran flang's (a Rust crate's frontend is rust_frontend.hpp's).
const Frontend& for_language(manifest::Language lang);

// Launcher mode: the registered frontend whose driver `given` (argv[0] as
// written) or `resolved` (where it was found, followed to its real path) is;
// nullptr when none is.
const Frontend* recognize(const fs::path& given, const std::optional<fs::path>& resolved);

// A planned job's command as the registered frontends read it (the first
// that answers), for the cache and remote execution, which know no driver
// option: Frontend::machine_dependent_option, dependency_scan, batch_scan.
std::optional<std::string> machine_dependent_option(const Argv& argv);
std::optional<Argv> dependency_scan(const Argv& argv, const std::string& depfile);
std::optional<scan_deps::Entry> batch_scan(const Argv& scan);

// The mode `program`'s name selects for a registered frontend's driver (the
// clang driver's --driver-mode: gcc, g++, flang); empty for any other program.
std::string driver_mode(const fs::path& program);

// The registered frontends, one line each (clang_frontend.cpp).
const Frontend& clang_openmp_frontend();
const Frontend& flang_openmp_frontend();

}  // namespace ob::toolchain::frontend
