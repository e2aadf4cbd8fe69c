// The passes of a launcher compile (frontend::Compile), built from the
// caller's own command line: a device pass per target, the host pass and,
// for single parse, the host-IR parse and the host codegen.
#include "clang_compiles.hpp"
#include "offload_build/toolchain/frontends/plain_compile.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_cli {

namespace {

void append(std::vector<std::string>& argv, const std::vector<std::string>& more) {
  argv.insert(argv.end(), more.begin(), more.end());
}

bool is_gpu_arch(const std::string& name) {
  return util::starts_with(name, "sm_") || util::starts_with(name, "gfx");
}

// Where and how a pass lists the files it read: as the caller asked for
// (`requested`: -MD or -MMD, its targets or clang's default one, -MP; joined
// -MT/-MQ spellings, so a target equal to the output path stays the output's
// name, not the temporary one the executor writes to), else plain -MD.
std::vector<std::string> dep_flags(const CompileRequest& req, const std::string& depfile,
                                   bool requested) {
  if (!requested || !req.deps) return {"-MD", "-MF", depfile};
  std::vector<std::string> flags{req.deps->user_headers_only ? "-MMD" : "-MD", "-MF", depfile};
  if (req.deps->targets.empty()) flags.push_back("-MQ" + req.output_arg());
  append(flags, req.deps->targets);
  if (req.deps->phony) flags.push_back("-MP");
  return flags;
}

// One device pass for `target`: the caller's arguments without the output,
// dependency and target-selection options, the -Xopenmp-target arguments of
// this target's triple, then `extra`, -Xarch_host -w (the host side it
// compiles too is the host pass's to diagnose), this target's selector,
// --offload-device-only, the dependency options and -o `out`. With
// `requested_depfile` the pass writes the caller's depfile to `depfile` (-MD
// or -MMD, its -MT/-MQ targets or clang's default one, -MP): the compiler
// alone writes it from its last device compile; else plain -MD -MF `depfile`.
// -Xarch_ARCH for another GPU arch is left out (clang would warn that it is
// unused, which the compiler alone does not).
std::vector<std::string> device_argv(const CompileRequest& req, const manifest::Target& target,
                                     const std::vector<std::string>& extra, const std::string& out,
                                     const std::string& depfile, bool requested_depfile) {
  std::vector<std::string> argv{req.compiler};
  for (const auto& a : req.args) {
    switch (a.kind) {
      case ArgKind::Common:
      case ArgKind::Input: append(argv, a.tokens); break;
      case ArgKind::XOpenmpTarget:
        // A GPU's -march= chose the arch, which target_selector now names;
        // the host device's stays (its selector names only the triple).
        if (util::starts_with(a.value, "-march=") && target.is_gpu()) break;
        if (a.triple.empty() || a.triple == target.triple)
          append(argv, {"-Xopenmp-target=" + target.triple, a.value});
        break;
      case ArgKind::XArch:
        if (!is_gpu_arch(a.value) || a.value == target.arch) append(argv, a.tokens);
        break;
      case ArgKind::DeviceFamily:
        if (a.triple == target.triple) append(argv, a.tokens);
        break;
      default: break;  // output, dependency and target options: the pass sets its own
    }
  }
  append(argv, extra);
  // A device pass also compiles the host side (for the host IR the device
  // compile reads); its diagnostics are the host pass's, printed there once.
  append(argv, {"-Xarch_host", "-w"});
  append(argv, {clang_openmp::target_selector(target), "--offload-device-only"});
  append(argv, dep_flags(req, depfile, requested_depfile));
  append(argv, {"-o", out});
  return argv;
}

// --offload-arch=native next to the host triple alone: the one-shot compile
// uses it (the host device finds no GPU arch there) and says nothing, a host
// pass alone would warn that it is unused; its host cc1 is the same without it.
bool native_only_for_host(const CompileRequest& req, const Arg& arg) {
  if (arg.kind != ArgKind::OffloadArch) return false;
  for (const auto& v : util::split(arg.value, ','))
    if (v != "native") return false;
  bool triples = false;
  for (const auto& a : req.args) {
    if (a.kind != ArgKind::OffloadTargets) continue;
    triples = true;
    for (const auto& t : util::split(a.value, ','))
      if (t != manifest::kHostTriple) return false;
  }
  return triples;
}

// The host pass's options. Its source and the preprocessor options are
// left out unless `with_source`; the device and record options unless
// `every_arg` (a compile run whole: plain_compile_argv).
std::vector<std::string> host_options(const CompileRequest& req, const std::string& out,
                                      bool with_source, bool every_arg = false) {
  std::vector<std::string> argv{req.compiler};
  bool wrote_output = false;
  for (const auto& a : req.args) {
    bool takes_next = false;
    if (!with_source &&
        (a.kind == ArgKind::Input ||
         (a.kind == ArgKind::Common && clang_openmp::is_preprocessor_option(a.tokens.front(), takes_next))))
      continue;
    if (every_arg && (a.kind == ArgKind::XOpenmpTarget || a.kind == ArgKind::RecordFile ||
                      a.kind == ArgKind::OffloadArch || a.kind == ArgKind::XArch ||
                      a.kind == ArgKind::DeviceFamily)) {
      append(argv, a.tokens);
      continue;
    }
    switch (a.kind) {
      case ArgKind::Output:
        append(argv, {"-o", out});
        wrote_output = true;
        break;
      case ArgKind::DepMode:
      case ArgKind::DepFile:
      case ArgKind::DepTarget:
      case ArgKind::DepPhony: break;  // normalized below
      case ArgKind::XOpenmpTarget: break;  // for device passes only
      case ArgKind::DeviceFamily: break;  // for device passes only
      case ArgKind::RecordFile: break;     // the host pass's own, below
      case ArgKind::OffloadArch:
        if (!native_only_for_host(req, a)) append(argv, a.tokens);
        break;
      case ArgKind::XArch:
        if (a.value != "device" && !is_gpu_arch(a.value)) append(argv, a.tokens);
        break;
      default: append(argv, a.tokens); break;
    }
  }
  if (!wrote_output) append(argv, {"-o", out});
  return argv;
}

// The host pass: the caller's command line (target options unchanged), with
// -o `out`, its dependency options replaced by -MD -MF `depfile`, then
// --offload-host-only -Xclang -fembed-offload-object=`package`. Arguments for
// devices only (-Xopenmp-target, -Xarch_device, -Xarch_GPUARCH) are left out.
// With `record`, the pass writes the optimization record there
// (-foptimization-record-file=), as do the host codegen's.
std::vector<std::string> host_argv(const CompileRequest& req, const std::vector<std::string>& extra,
                                   const std::string& package, const std::string& out,
                                   const std::string& depfile, const std::string& record) {
  std::vector<std::string> argv = host_options(req, out, true);
  append(argv, extra);
  if (!record.empty()) argv.push_back("-foptimization-record-file=" + record);
  append(argv, dep_flags(req, depfile, false));
  argv.push_back("--offload-host-only");
  append(argv, clang_openmp::embed_package(package));
  return argv;
}

// Single parse: the host pass's parse alone, writing unoptimized bitcode to
// `out` (-emit-llvm -Xclang -disable-llvm-passes instead of embedding a package).
std::vector<std::string> host_ir_argv(const CompileRequest& req, const std::vector<std::string>& extra,
                                      const std::string& out, const std::string& depfile) {
  std::vector<std::string> argv = host_options(req, out, true);
  append(argv, extra);
  append(argv, dep_flags(req, depfile, false));
  argv.push_back("--offload-host-only");
  append(argv, clang_openmp::emit_host_ir());
  return argv;
}

// Single parse: the host codegen from `host_ir`, embedding `package`: the
// host pass's options without the source, dependency and preprocessor ones,
// then -x ir `host_ir`.
std::vector<std::string> host_codegen_argv(const CompileRequest& req,
                                           const std::vector<std::string>& extra,
                                           const std::string& host_ir, const std::string& package,
                                           const std::string& out, const std::string& record) {
  std::vector<std::string> argv = host_options(req, out, false);
  append(argv, extra);
  if (!record.empty()) argv.push_back("-foptimization-record-file=" + record);
  argv.push_back("--offload-host-only");
  append(argv, clang_openmp::embed_package(package));
  append(argv, {"-x", "ir", host_ir});
  return argv;
}

// The passes of a launcher compile: the caller's command line, reshaped.
class LauncherCompile final : public frontend::Compile {
 public:
  LauncherCompile(const CompileRequest& req, const fs::path& cwd, std::string record)
      : req_(req), record_(std::move(record)) {
    // Debug info records the compilation directory (clang's default: the
    // cwd), and so does the IR of a compile tracking source locations
    // (remarks, records), which -flto/-foffload-lto objects keep. Naming it
    // makes it part of the cache key, so an object built in another
    // directory is never served with that directory in it.
    if ((req.debug_info || req.tracks_locations || req.opt_record) && !req.sets_compilation_dir)
      extra_.push_back("-fdebug-compilation-dir=" + cwd.string());
    std::vector<std::string> options;  // the caller's, as written
    for (const auto& a : req.args) options.insert(options.end(), a.tokens.begin(), a.tokens.end());
    offload_lto_ = clang_openmp::uses_offload_lto(options);
  }

  frontend::Argv device(const manifest::Target& target, const std::string& out, const std::string& depfile,
                        bool callers_depfile) const override {
    return device_argv(req_, target, extra_, out, depfile, callers_depfile);
  }
  frontend::Argv host(const std::string& package, const std::string& out,
                      const std::string& depfile) const override {
    return host_argv(req_, extra_, package, out, depfile, record_);
  }
  frontend::Argv host_ir(const std::string& out, const std::string& depfile) const override {
    return host_ir_argv(req_, extra_, out, depfile);
  }
  frontend::Argv host_codegen(const std::string& host_ir, const std::string& package,
                              const std::string& out) const override {
    return host_codegen_argv(req_, extra_, host_ir, package, out, record_);
  }
  bool offload_lto() const override { return offload_lto_; }

 private:
  const CompileRequest& req_;
  std::string record_;
  std::vector<std::string> extra_;
  bool offload_lto_ = false;
};

}  // namespace

std::unique_ptr<frontend::Compile> launcher_compile(const CompileRequest& req, const fs::path& cwd,
                                                    const std::string& record) {
  return std::make_unique<LauncherCompile>(req, cwd, record);
}

}  // namespace ob::toolchain::clang_cli

namespace ob::toolchain::frontend {

// One pass too, for clang and GCC alike (plain_compile.hpp): the caller's
// arguments in order, -o and the dependency options normalized.
std::vector<std::string> plain_compile_argv(const CompileRequest& req, const std::string& depfile) {
  std::vector<std::string> argv = clang_cli::host_options(req, req.output_arg(), true, true);
  clang_cli::append(argv, clang_cli::dep_flags(req, depfile, req.deps.has_value()));
  return argv;
}

}  // namespace ob::toolchain::frontend
