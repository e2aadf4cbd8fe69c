// The flang OpenMP-offload frontend: Fortran through flang's driver (flang-22).
// Its offload pipeline is clang's single parse (docs/FORTRAN.md): the host
// parse writes the host IR (`--offload-host-only -emit-llvm`), per target a
// device -fc1 reads it (split from the `--offload-device-only` listing), the
// images are packaged by llvm-offload-binary, and the host codegen compiles
// the IR embedding the package (`-Xflang -fembed-offload-object= -x ir`);
// without a driver probe, the two-parse driver form. Unlike clang, flang
// writes no depfile (-MD is refused): what a source reads and writes besides
// itself (module files, INCLUDE files) comes from a scan (fortran_scan.cpp),
// which the planners turn into job order, outputs and keyed inputs.
#include <algorithm>

#include "clang_compiles.hpp"
#include "single_parse_shapes.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::frontend {

namespace {

// What the passes read and write besides the source (fortran_scan.hpp): the
// options' -I directories, module directory (-J, -module-dir; else
// `default_module_dir`) and form, paths relative to `cwd`.
ModuleFiles module_files_of(const Argv& options, const fs::path& cwd, const fs::path& source_arg,
                            const fs::path& default_module_dir) {
  const fs::path source = (cwd / source_arg).lexically_normal();
  ModuleFiles files;
  files.module_dir = default_module_dir;
  std::vector<fs::path> includes;
  fortran::Macros macros;
  bool fixed = fortran::fixed_form_by_extension(source);
  for (size_t i = 1; i < options.size(); ++i) {
    const std::string& t = options[i];
    auto value = [&](std::string_view flag) -> std::optional<std::string> {
      if (t == flag && i + 1 < options.size()) return options[++i];
      if (flag.size() == 2 && util::starts_with(t, flag) && t.size() > 2) return t.substr(2);
      return std::nullopt;
    };
    if (t == "-ffixed-form") fixed = true;
    else if (t == "-ffree-form") fixed = false;
    else if (auto dir = value("-I")) includes.push_back((cwd / *dir).lexically_normal());
    else if (auto mod = value("-J")) files.module_dir = (cwd / *mod).lexically_normal();
    else if (auto mod2 = value("-module-dir")) files.module_dir = (cwd / *mod2).lexically_normal();
    else if (auto def = value("-D")) {
      const std::string name = def->substr(0, def->find('='));
      macros.undefined.erase(name);
      macros.defined.insert(name);
    } else if (auto undef = value("-U")) {
      macros.defined.erase(*undef);
      macros.undefined.insert(*undef);
    }
  }
  files.search = includes;
  files.search.push_back(cwd);
  files.scan = fortran::scan(source, includes, fixed, std::move(macros));
  files.source_name = files.scan.line_file ? *files.scan.line_file : source_arg.string();
  files.in_working_dir = !fs::path(files.source_name).is_absolute();
  return files;
}

// A flang command line's options: the parser keeps what it knows every pass
// may be given as written, and runs anything else unchanged.
bool common_flag(const std::string& t) {
  static const char* const kExact[] = {
      "-fopenmp", "-g", "-g0", "-g1", "-g2", "-g3", "-gline-tables-only", "-O", "-O0", "-O1", "-O2",
      "-O3", "-Os", "-Oz", "-Ofast", "-cpp", "-nocpp", "-ffree-form", "-ffixed-form",
      "-fimplicit-none", "-fno-implicit-none", "-fdefault-real-8", "-fdefault-integer-8",
      "-fdefault-double-8", "-fbackslash", "-fno-backslash", "-fPIC", "-fpic", "-fPIE", "-fpie",
      "-fno-pic", "-fno-pie", "-ffast-math", "-fno-fast-math", "-funroll-loops", "-fno-unroll-loops",
      "-w", "-pedantic", "-nogpulib", "-fopenacc", "-fstack-arrays", "-fno-stack-arrays",
      "-flarge-sizes", "-fxor-operator", "-fopenmp-assume-no-thread-state",
      "-fopenmp-assume-no-nested-parallelism", "-fopenmp-assume-threads-oversubscription",
      "-fopenmp-assume-teams-oversubscription", "-fopenmp-offload-mandatory", "-fomit-frame-pointer",
      "-fno-omit-frame-pointer", "-fvectorize", "-fno-vectorize", "-fslp-vectorize", "-fno-slp-vectorize",
      "-fno-signed-zeros", "-freciprocal-math", "-fassociative-math", "-fno-honor-nans", "-fno-honor-infinities",
      "-fapprox-func", "-funderscoring", "-fno-underscoring", "-frealloc-lhs", "-fno-realloc-lhs", "-fno-automatic"};
  for (const char* f : kExact)
    if (t == f) return true;
  for (std::string_view p : {"-fopenmp-version=", "-std=", "-march=", "-mcpu=", "-mtune=", "-fconvert=",
                             "-ffp-contract=", "-ffixed-line-length=", "-ffree-line-length=", "-W"})
    if (util::starts_with(t, p) && t.size() > p.size()) return true;
  return false;
}

// -I DIR, -J DIR, -D X, -U X, -module-dir DIR (joined or separate; -module-dir separate).
bool valued_flag(const std::string& t, bool& takes_next) {
  takes_next = false;
  if (t == "-module-dir" || t == "-I" || t == "-J" || t == "-D" || t == "-U") return takes_next = true;
  for (std::string_view p : {"-I", "-J", "-D", "-U"})
    if (util::starts_with(t, p)) return true;
  return false;
}

Parsed refuse(std::string reason, const char* code, std::string option = {}) {
  Parsed p;
  p.pass_reason = std::move(reason);
  p.pass_code = code;
  p.option = std::move(option);
  return p;
}

// The offload targets one -fopenmp-targets= / --offload-arch= names, or why not modelled.
Result<std::vector<manifest::Target>> targets_of(const std::string& t) {
  std::vector<manifest::Target> out;
  const bool by_triple = util::starts_with(t, "-fopenmp-targets=");
  const std::string list = t.substr(t.find('=') + 1);
  for (const auto& name : util::split(list, ',')) {
    if (by_triple) {
      if (name != manifest::kHostTriple)
        return Error::usage("target " + name + " without an arch (name GPUs with --offload-arch=)");
      out.push_back({std::string(manifest::kHostTriple), "generic"});
    } else {
      auto target = manifest::resolve_target(name);
      if (!target || !target->is_gpu()) return Error::usage("offload arch " + name);
      out.push_back(*target);
    }
  }
  if (out.empty()) return Error::usage("no offload targets");
  return out;
}

Parsed parse_flang(const Argv& argv) {
  CompileRequest req;
  req.compiler = argv.front();
  req.language = manifest::Language::Fortran;
  bool compile = false;
  bool openmp = false;
  bool targets_given = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    Arg arg{ArgKind::Common, {t}, {}, {}};
    bool takes_next = false;
    if (t == "-c") {
      compile = true;
    } else if (t == "-E" || t == "-S" || t == "-fsyntax-only" || t == "-emit-llvm" || t == "-###") {
      Parsed p = refuse(t + ": not a compile to an object", unchanged::kNotCompile);
      // CMake's preprocessing (Ninja): the #line it writes names the source
      // as the command does, relative under base_dir as the compile's own.
      p.relative_paths = t == "-E";
      return p;
    } else if (t == "-o" || (util::starts_with(t, "-o") && t.size() > 2)) {
      if (t == "-o" && i + 1 == argv.size()) return refuse("-o without a file", unchanged::kOption, "-o");
      arg.kind = ArgKind::Output;
      if (t == "-o") arg.tokens.push_back(argv[++i]);
      arg.value = t == "-o" ? argv[i] : t.substr(2);
      req.output = arg.value;
    } else if (t == "-fopenmp" || t == "-fopenmp=libomp") {
      openmp = true;
    } else if (t == "-fno-openmp") {
      return refuse("-fno-openmp", unchanged::kNotOffload);
    } else if (util::starts_with(t, "-fopenmp-targets=") || util::starts_with(t, "--offload-arch=")) {
      if (targets_given)
        return refuse("more than one offload-target option", unchanged::kTargets);
      targets_given = true;
      auto targets = targets_of(t);
      if (!targets) return refuse("unsupported targets: " + targets.error().message, unchanged::kTargets);
      req.targets = std::move(*targets);
      arg.kind = util::starts_with(t, "--") ? ArgKind::OffloadArch : ArgKind::OffloadTargets;
      arg.value = t.substr(t.find('=') + 1);
    } else if (valued_flag(t, takes_next)) {
      if (takes_next) {
        if (i + 1 == argv.size()) return refuse(t + " without a value", unchanged::kOption, t);
        arg.tokens.push_back(argv[++i]);
      }
    } else if (!t.empty() && t.front() == '-') {
      if (!common_flag(t))
        return refuse("option " + t + " is not one offload-build splits for flang", unchanged::kOption,
                      clang_cli::option_name(t));
    } else {
      const auto lang = manifest::language_from_extension(t);
      if (!lang || *lang != manifest::Language::Fortran)
        return refuse("input " + t + " is not a Fortran source", unchanged::kNotCompile);
      if (!req.source.empty()) return refuse("more than one source", unchanged::kNotCompile);
      req.source = t;
      arg.kind = ArgKind::Input;
      arg.value = t;
    }
    if (t == "-g0") req.debug_info = false;
    else if (util::starts_with(t, "-g")) req.debug_info = true;
    req.args.push_back(std::move(arg));
  }
  if (!compile) return refuse("no -c: not a compile to an object", unchanged::kNotCompile);
  if (req.source.empty()) return refuse("no source", unchanged::kNotCompile);
  if (!openmp) return refuse("no -fopenmp", unchanged::kNotOffload);
  if (req.targets.empty()) return refuse("no offload targets", unchanged::kNotOffload);
  Parsed p;
  p.compile = std::move(req);
  return p;
}

// The passes of one Fortran compile: `head` (the driver and every option each
// pass takes as written), the source and the host pass's target options.
class FlangCompile final : public Compile {
 public:
  FlangCompile(Argv head, std::string source, Argv host_targets, ModuleFiles files, Argv device_only = {},
               Argv host_only = {})
      : head_(std::move(head)), source_(std::move(source)), host_targets_(std::move(host_targets)),
        files_(std::move(files)), device_only_(std::move(device_only)), host_only_(std::move(host_only)) {}

  Argv device(const manifest::Target& target, const std::string& out, const std::string& /*depfile*/,
              bool /*callers_depfile*/) const override {
    Argv argv = head_;
    argv.insert(argv.end(), device_only_.begin(), device_only_.end());
    argv.insert(argv.end(), {clang_openmp::target_selector(target), "--offload-device-only", "-c",
                             source_, "-o", out});
    return argv;
  }

  Argv host(const std::string& package, const std::string& out, const std::string& /*depfile*/) const override {
    Argv argv = host_head();
    for (auto& a : clang_openmp::embed_package(package)) argv.push_back(a == "-Xclang" ? "-Xflang" : a);
    argv.insert(argv.end(), {"-c", source_, "-o", out});
    return argv;
  }

  // Single parse, as flang's one-shot compile runs: the host parse writes
  // the host IR once, the device -fc1s read it, the host codegen compiles it.
  Argv host_ir(const std::string& out, const std::string& /*depfile*/) const override {
    Argv argv = host_head();
    argv.insert(argv.end(), {"-emit-llvm", "-c", source_, "-o", out});
    return argv;
  }
  // The options that only preprocess (-I -D -U -cpp -nocpp) or warn (-W...)
  // are left out: flang would report them unused on an IR input.
  Argv host_codegen(const std::string& host_ir, const std::string& package, const std::string& out) const override {
    Argv argv;
    const Argv head = host_head();
    for (size_t i = 0; i < head.size(); ++i) {
      bool takes_next = false;
      if (i > 0 && (clang_openmp::is_preprocessor_option(head[i], takes_next) || head[i] == "-cpp" ||
                    head[i] == "-nocpp" || util::starts_with(head[i], "-W"))) {
        i += takes_next;
        continue;
      }
      argv.push_back(head[i]);
    }
    for (auto& a : clang_openmp::embed_package(package)) argv.push_back(a == "-Xclang" ? "-Xflang" : a);
    argv.insert(argv.end(), {"-c", "-x", "ir", host_ir, "-o", out});
    return argv;
  }

  bool offload_lto() const override { return false; }
  bool host_parse_listed() const override { return true; }
  std::optional<std::string> two_parse_reason() const override {
    if (device_only_.empty() && host_only_.empty()) return std::nullopt;
    return "host_flags or device_flags are set, so a device pass's own host parse differs from the host pass's";
  }
  const ModuleFiles* module_files() const override { return &files_; }

 private:
  // Every host pass's start: the options, the host's own, the targets.
  Argv host_head() const {
    Argv argv = head_;
    argv.insert(argv.end(), host_only_.begin(), host_only_.end());
    argv.insert(argv.end(), host_targets_.begin(), host_targets_.end());
    argv.push_back("--offload-host-only");
    return argv;
  }

  Argv head_;
  std::string source_;
  Argv host_targets_;
  ModuleFiles files_;
  Argv device_only_;  // a manifest's device_flags
  Argv host_only_;    // a manifest's host_flags
};

std::string triples_of(const std::vector<manifest::Target>& targets) {
  std::string out;
  for (const auto& t : targets) {
    if (out.find(t.triple) != std::string::npos) continue;
    out += (out.empty() ? "" : ",") + t.triple;
  }
  return out;
}

class FlangOpenMp final : public Frontend {
 public:
  std::string_view name() const override { return "flang OpenMP offload"; }

  bool compiles(manifest::Language lang) const override { return lang == manifest::Language::Fortran; }

  // [TRIPLE-]flang[-new][-VERSION], as the clang driver takes its flang mode.
  bool recognizes(const fs::path& program) const override { return clang_cli::driver_mode(program) == "flang"; }

  Parsed parse(const Argv& argv) const override { return parse_flang(argv); }

  bool lists_reads() const override { return false; }

  // A manifest's flags read as flang's launcher compile reads them (-ffree-form is no C flag).
  OptionFiles option_files(const manifest::Manifest& m) const override {
    return clang_openmp::option_files(m, "flang", "offload-build-options.f90", parse_flang);
  }

  std::unique_ptr<Compile> manifest_compile(const Toolchain& tc, const manifest::Manifest& m,
                                            const manifest::SourceFile& src, const fs::path& src_arg) const override {
    Argv head{tc.flang.string(), "-fopenmp"};
    for (const auto& dir : m.include_dirs) head.push_back("-I" + dir);
    for (const auto& def : m.defines) head.push_back("-D" + def);
    head.insert(head.end(), m.flags.begin(), m.flags.end());
    // Module files go under the build directory (one directory, as CMake's),
    // unless the flags name one.
    const fs::path module_dir = m.build_dir / "mod";
    ModuleFiles files = module_files_of(head, m.project_dir, src_arg, module_dir);
    if (files.module_dir == module_dir) {
      const fs::path rel = module_dir.lexically_relative(m.project_dir);
      head.insert(head.end(), {"-module-dir", rel.empty() || *rel.begin() == ".." ? module_dir.string() : rel.string()});
    }
    files.search.insert(files.search.begin(), files.module_dir);
    return std::make_unique<FlangCompile>(std::move(head), src_arg.string(),
                                          Argv{"-fopenmp-targets=" + triples_of(m.targets)}, std::move(files),
                                          m.device_flags, m.host_flags);
  }

  std::unique_ptr<Compile> launcher_compile(const CompileRequest& req, const fs::path& cwd,
                                            const std::string& /*record: flang writes none*/) const override {
    Argv head{req.compiler};
    Argv host_targets;
    for (const auto& a : req.args) {
      if (a.kind == ArgKind::Common && a.tokens.front() != "-c")
        head.insert(head.end(), a.tokens.begin(), a.tokens.end());
      if (a.kind == ArgKind::OffloadTargets || a.kind == ArgKind::OffloadArch)
        host_targets.insert(host_targets.end(), a.tokens.begin(), a.tokens.end());
    }
    // Without -J, flang writes and finds module files in the working directory.
    ModuleFiles files = module_files_of(head, cwd, req.source, cwd);
    files.search.insert(files.search.begin(), files.module_dir);
    return std::make_unique<FlangCompile>(std::move(head), req.source, std::move(host_targets), std::move(files));
  }

  Argv package(const Toolchain& tc, const std::vector<Image>& images, const fs::path& out) const override {
    return clang_openmp::package(tc, images, out);
  }

  // flang's driver links the Fortran runtime; the offload part is clang's.
  Argv link(const Toolchain& tc, const manifest::Manifest& m, const std::vector<fs::path>& objects, const fs::path& out,
            const fs::path& depfile) const override {
    // Without clang's `-Xopenmp-target=T -march=A` pairs, which flang before
    // LLVM 20 refuses: the images in the objects carry their archs, and the
    // link is the same without them (LLVM 19: byte-identical).
    Argv argv;
    bool target_option = false;  // the -march= after an -Xopenmp-target=
    for (auto& a : clang_openmp::link(tc, m, objects, out, depfile)) {
      const bool skip = util::starts_with(a, "-Xopenmp-target=") || (target_option && util::starts_with(a, "-march="));
      target_option = util::starts_with(a, "-Xopenmp-target=");
      if (!skip) argv.push_back(std::move(a));
    }
    argv.front() = tc.flang.string();
    return argv;
  }

  // The `--offload-device-only` listing: host-IR -fc1, device -fc1, ptxas for nvptx.
  Result<single_parse::DevicePass> split_device_pass(const std::vector<Argv>& listing,
                                                     const single_parse::UnitPaths& probed,
                                                     bool shared) const override {
    return single_parse::templatize(listing, probed, shared, single_parse::Shape::Flang);
  }
};

}  // namespace

const Frontend& flang_openmp_frontend() {
  static const FlangOpenMp flang;
  return flang;
}

}  // namespace ob::toolchain::frontend
