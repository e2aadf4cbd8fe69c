#include "offload_build/toolchain/frontends/clang_openmp.hpp"

#include "clang_compiles.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "offload_build/toolchain/frontends/clang_cli.hpp"

namespace ob::toolchain::clang_openmp {

namespace {

const fs::path& compiler_for(const Toolchain& tc, manifest::Language lang) {
  return lang == manifest::Language::Cxx ? tc.clangxx : tc.clang;
}

// Unique triples in manifest order: the host pass and the link name all of them.
std::string offload_triples(const manifest::Manifest& m) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& t : m.targets) {
    if (!seen.insert(t.triple).second) continue;
    if (!out.empty()) out += ',';
    out += t.triple;
  }
  return out;
}

// Flags every compile of a TU gets: include dirs, defines, then the user's flags.
void append_common(std::vector<std::string>& argv, const manifest::Manifest& m) {
  for (const auto& dir : m.include_dirs) argv.push_back("-I" + dir);
  for (const auto& def : m.defines) argv.push_back("-D" + def);
  argv.insert(argv.end(), m.flags.begin(), m.flags.end());
}

bool needs_nogpulib(const Toolchain& tc, const manifest::Manifest& m) {
  for (const auto& t : m.targets)
    if (t.is_gpu() && !tc.has_device_runtime(t)) return true;
  return false;
}

}  // namespace

bool is_preprocessor_option(const std::string& a, bool& takes_next) {
  static const char* const kWithValue[] = {"-I", "-D", "-U", "-include", "-imacros", "-isystem",
                                           "-iquote", "-idirafter", "-iprefix", "-iwithprefix"};
  for (const char* flag : kWithValue) {
    if (a == flag) {
      takes_next = true;
      return true;
    }
    const std::string_view f(flag);
    if (f.size() == 2 && a.compare(0, 2, f) == 0) return true;  // -Idir, -DX=1
  }
  return false;
}

std::vector<std::string> device_runtime_flags(const Toolchain& tc, const manifest::Target& target) {
  if (!target.is_gpu()) return {};
  const auto rt = tc.device_runtime(target);
  if (!rt) return {"-nogpulib"};  // only ompx_bare kernels build
  std::vector<std::string> flags;
  if (rt->bitcode_elsewhere) {
    const bool nvptx = target.family() == manifest::TargetFamily::Nvptx;
    flags.push_back((nvptx ? "--libomptarget-nvptx-bc-path=" : "--libomptarget-amdgpu-bc-path=") +
                    rt->file.parent_path().string());
  }
  if (rt->without_rocm_libs) flags.push_back("-nogpulib");
  return flags;
}

std::vector<std::string> runtime_compile_flags(const Toolchain& tc, const std::vector<manifest::Target>& targets) {
  std::vector<std::string> flags;
  auto add = [&](std::string f) {
    if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(std::move(f));
  };
  for (const auto& t : targets) {
    if (!t.is_gpu()) continue;
    const auto rt = tc.device_runtime(t);
    if (!rt) continue;
    const bool nvptx = t.family() == manifest::TargetFamily::Nvptx;
    if (rt->bitcode_elsewhere)
      add((nvptx ? "--libomptarget-nvptx-bc-path=" : "--libomptarget-amdgpu-bc-path=") + rt->file.parent_path().string());
    if (rt->without_rocm_libs) add("-Xopenmp-target=" + t.triple + " -nogpulib");
  }
  return flags;
}

std::string target_selector(const manifest::Target& target) {
  return target.is_gpu() ? "--offload-arch=" + target.arch : "-fopenmp-targets=" + target.triple;
}

std::vector<std::string> embed_package(const std::string& package) {
  return {"-Xclang", "-fembed-offload-object=" + package};
}

std::vector<std::string> emit_host_ir() {
  return {"-emit-llvm", "-Xclang", "-disable-llvm-passes"};
}

std::vector<std::string> package(const Toolchain& tc, const std::vector<Image>& images,
                                 const fs::path& out) {
  // The clang driver lists images sorted by (triple, arch); doing the same makes
  // the linked program byte-identical to a one-shot clang build.
  std::vector<Image> sorted = images;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Image& a, const Image& b) {
    return std::tie(a.target.triple, a.target.arch) < std::tie(b.target.triple, b.target.arch);
  });
  std::vector<std::string> argv{tc.offload_binary.string(), "-o", out.string()};
  for (const auto& img : sorted) {
    std::string image = "--image=file=" + img.file.string() + ",triple=" + img.target.triple +
                        ",arch=" + tc.image_arch(img.target) + ",kind=openmp";
    for (const auto& f : img.features) image += ",feature=" + f;
    argv.push_back(std::move(image));
  }
  return argv;
}

bool uses_offload_lto(const std::vector<std::string>& options) {
  bool lto = false;
  for (const auto& a : options) {
    if (a == "-foffload-lto" || a.rfind("-foffload-lto=", 0) == 0) lto = true;
    else if (a == "-fno-offload-lto") lto = false;
  }
  return lto;
}

namespace {

// The passes of manifest source `src` (paths as the planner writes them).
class ManifestCompile final : public frontend::Compile {
 public:
  ManifestCompile(const Toolchain& tc, const manifest::Manifest& m, const manifest::SourceFile& src, fs::path src_arg)
      : tc_(tc), m_(m), src_(src), src_arg_(std::move(src_arg)) {}

  frontend::Argv device(const manifest::Target& target, const std::string& out, const std::string& depfile,
                        bool /*callers_depfile: none in a manifest build*/) const override {
    frontend::Argv argv{compiler_for(tc_, src_.language).string(), "-fopenmp",
                        target_selector(target)};
    for (auto& f : device_runtime_flags(tc_, target)) argv.push_back(std::move(f));
    argv.push_back("--offload-device-only");
    append_common(argv, m_);
    argv.insert(argv.end(), m_.device_flags.begin(), m_.device_flags.end());
    argv.insert(argv.end(), {"-MD", "-MF", depfile});
    argv.insert(argv.end(), {"-c", src_arg_.string(), "-o", out});
    return argv;
  }

  frontend::Argv host(const std::string& package, const std::string& out,
                      const std::string& depfile) const override {
    return host_pass(embed_package(package), out, depfile);
  }

  frontend::Argv host_ir(const std::string& out, const std::string& depfile) const override {
    return host_pass(emit_host_ir(), out, depfile);
  }

  // The user's preprocessor options (-I -D -U -include ...) are left out:
  // they would only be reported unused on an IR input.
  frontend::Argv host_codegen(const std::string& host_ir, const std::string& package,
                              const std::string& out) const override {
    frontend::Argv argv = host_head(embed_package(package));
    std::vector<std::string> flags = m_.flags;
    flags.insert(flags.end(), m_.host_flags.begin(), m_.host_flags.end());
    for (size_t i = 0; i < flags.size(); ++i) {
      bool takes_next = false;
      if (is_preprocessor_option(flags[i], takes_next)) {
        i += takes_next;
        continue;
      }
      argv.push_back(flags[i]);
    }
    argv.insert(argv.end(), {"-c", "-x", "ir", host_ir, "-o", out});
    return argv;
  }

  bool offload_lto() const override { return uses_offload_lto(m_.flags); }

  std::optional<std::string> two_parse_reason() const override {
    if (m_.host_flags.empty() && m_.device_flags.empty()) return std::nullopt;
    return "host_flags or device_flags are set, so a device pass's own host parse differs from "
           "the host pass's";
  }

 private:
  // The start of every host pass, then `what` it makes (embed a package, or IR).
  frontend::Argv host_head(std::vector<std::string> what) const {
    frontend::Argv argv{compiler_for(tc_, src_.language).string(), "-fopenmp",
                        "-fopenmp-targets=" + offload_triples(m_), "--offload-host-only"};
    for (auto& a : what) argv.push_back(std::move(a));
    return argv;
  }

  // A host pass parsing the source.
  frontend::Argv host_pass(std::vector<std::string> what, const std::string& out,
                           const std::string& depfile) const {
    frontend::Argv argv = host_head(std::move(what));
    append_common(argv, m_);
    argv.insert(argv.end(), m_.host_flags.begin(), m_.host_flags.end());
    argv.insert(argv.end(), {"-MD", "-MF", depfile});
    argv.insert(argv.end(), {"-c", src_arg_.string(), "-o", out});
    return argv;
  }

  const Toolchain& tc_;
  const manifest::Manifest& m_;
  const manifest::SourceFile& src_;
  fs::path src_arg_;
};

}  // namespace

std::unique_ptr<frontend::Compile> manifest_compile(const Toolchain& tc, const manifest::Manifest& m,
                                                    const manifest::SourceFile& src, const fs::path& src_arg) {
  return std::make_unique<ManifestCompile>(tc, m, src, src_arg);
}

OptionFiles option_files(const manifest::Manifest& m) {
  return option_files(m, "clang", "offload-build-options.c", clang_cli::parse);
}

OptionFiles option_files(const manifest::Manifest& m, const std::string& driver, const std::string& source,
                         const std::function<frontend::Parsed(const std::vector<std::string>&)>& parse) {
  OptionFiles out;
  // The options of one pass read as a launcher compile of `source` for the
  // host device (a compile the parser splits) with them would be.
  auto read = [&](const std::vector<std::string>& extra, const char* field, std::vector<std::string>& files) {
    if (out.uncacheable) return;
    std::vector<std::string> argv{driver, "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c"};
    argv.insert(argv.end(), m.flags.begin(), m.flags.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(source);
    const auto parsed = parse(argv);
    if (!parsed.compile) {
      const std::string where = extra.empty() ? "flags" : m.flags.empty() ? field : "flags and " + std::string(field);
      out.uncacheable = "offload.json " + where + ": " + parsed.pass_reason;
      return;
    }
    files = parsed.compile->keyed_files;
    out.maybe.insert(out.maybe.end(), parsed.compile->maybe_files.begin(), parsed.compile->maybe_files.end());
  };
  read(m.host_flags, "host_flags", out.host);
  read(m.device_flags, "device_flags", out.device);
  return out;
}

fs::path host_linker(const Toolchain& tc, const manifest::Manifest& m) {
  const bool lld = m.linker == manifest::Manifest::Linker::Lld && tc.lld && !m.is_rust();
  return lld ? *tc.lld : fs::path("/usr/bin/ld");
}

std::vector<std::string> link(const Toolchain& tc, const manifest::Manifest& m,
                              const std::vector<fs::path>& objects, const fs::path& out,
                              const fs::path& depfile) {
  bool any_cxx = false;
  for (const auto& s : m.sources) any_cxx |= s.language == manifest::Language::Cxx;
  std::vector<std::string> argv{(any_cxx ? tc.clangxx : tc.clang).string(), "-fopenmp",
                                "-fopenmp-targets=" + offload_triples(m)};
  for (const auto& t : m.targets) {
    if (!t.is_gpu()) continue;
    argv.insert(argv.end(), {"-Xopenmp-target=" + t.triple, "-march=" + t.arch});
  }
  if (needs_nogpulib(tc, m)) argv.push_back("-nogpulib");
  // lld links a small offload program in about half the time of GNU ld.
  if (tc.lld && host_linker(tc, m) == *tc.lld) argv.push_back("-fuse-ld=lld");
  for (const auto& obj : objects) argv.push_back(obj.string());
  argv.insert(argv.end(), {"-o", out.string()});
  // Every file the linker read (libraries included), for the cache.
  argv.push_back("-Wl,--dependency-file=" + depfile.string());
  argv.insert(argv.end(), m.link_flags.begin(), m.link_flags.end());
  for (const auto& lib : m.libs) {
    // A bare name is a library to search for; anything with a slash or suffix is a path.
    bool is_path = lib.find('/') != std::string::npos || lib.find(".a") != std::string::npos ||
                   lib.find(".so") != std::string::npos;
    argv.push_back(is_path ? lib : "-l" + lib);
  }
  return argv;
}

}  // namespace ob::toolchain::clang_openmp
