#include "offload_build/toolchain/frontends/clang_openmp.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace ob::clang_openmp {

namespace {

const fs::path& compiler_for(const Toolchain& tc, Language lang) {
  return lang == Language::Cxx ? tc.clangxx : tc.clang;
}

// Unique triples in manifest order: the host pass and the link name all of them.
std::string offload_triples(const Manifest& m) {
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
void append_common(std::vector<std::string>& argv, const Manifest& m) {
  for (const auto& dir : m.include_dirs) argv.push_back("-I" + dir);
  for (const auto& def : m.defines) argv.push_back("-D" + def);
  argv.insert(argv.end(), m.flags.begin(), m.flags.end());
}

bool needs_nogpulib(const Toolchain& tc, const Manifest& m) {
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

std::string target_selector(const Target& target) {
  return target.is_gpu() ? "--offload-arch=" + target.arch : "-fopenmp-targets=" + target.triple;
}

std::vector<std::string> embed_package(const fs::path& package) {
  return {"-Xclang", "-fembed-offload-object=" + package.string()};
}

std::vector<std::string> device_compile(const Toolchain& tc, const Manifest& m,
                                        const SourceFile& src, const fs::path& src_arg,
                                        const Target& target, const fs::path& out,
                                        const fs::path& depfile) {
  std::vector<std::string> argv{compiler_for(tc, src.language).string(), "-fopenmp",
                                target_selector(target)};
  if (target.is_gpu() && !tc.has_device_runtime(target)) argv.push_back("-nogpulib");
  argv.push_back("--offload-device-only");
  append_common(argv, m);
  argv.insert(argv.end(), m.device_flags.begin(), m.device_flags.end());
  argv.insert(argv.end(), {"-MD", "-MF", depfile.string()});
  argv.insert(argv.end(), {"-c", src_arg.string(), "-o", out.string()});
  return argv;
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
                        ",arch=" + img.target.arch + ",kind=openmp";
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

// The start of every host pass of `src`, then `what` it makes (embed a
// package, or IR).
std::vector<std::string> host_head(const Toolchain& tc, const Manifest& m, const SourceFile& src,
                                   std::vector<std::string> what) {
  std::vector<std::string> argv{compiler_for(tc, src.language).string(), "-fopenmp",
                                "-fopenmp-targets=" + offload_triples(m), "--offload-host-only"};
  for (auto& a : what) argv.push_back(std::move(a));
  return argv;
}

// A host pass parsing `src`.
std::vector<std::string> host_pass(const Toolchain& tc, const Manifest& m, const SourceFile& src,
                                   std::vector<std::string> what, const fs::path& src_arg,
                                   const fs::path& out, const fs::path& depfile) {
  std::vector<std::string> argv = host_head(tc, m, src, std::move(what));
  append_common(argv, m);
  argv.insert(argv.end(), m.host_flags.begin(), m.host_flags.end());
  argv.insert(argv.end(), {"-MD", "-MF", depfile.string()});
  argv.insert(argv.end(), {"-c", src_arg.string(), "-o", out.string()});
  return argv;
}

}  // namespace

std::vector<std::string> host_compile(const Toolchain& tc, const Manifest& m,
                                      const SourceFile& src, const fs::path& src_arg,
                                      const fs::path& package, const fs::path& out,
                                      const fs::path& depfile) {
  return host_pass(tc, m, src, embed_package(package), src_arg, out, depfile);
}

std::vector<std::string> host_ir(const Toolchain& tc, const Manifest& m, const SourceFile& src,
                                 const fs::path& src_arg, const fs::path& out,
                                 const fs::path& depfile) {
  return host_pass(tc, m, src, {"-emit-llvm", "-Xclang", "-disable-llvm-passes"}, src_arg, out,
                   depfile);
}

std::vector<std::string> host_codegen(const Toolchain& tc, const Manifest& m,
                                      const SourceFile& src, const fs::path& host_ir,
                                      const fs::path& package, const fs::path& out) {
  std::vector<std::string> argv = host_head(tc, m, src, embed_package(package));
  std::vector<std::string> flags = m.flags;
  flags.insert(flags.end(), m.host_flags.begin(), m.host_flags.end());
  for (size_t i = 0; i < flags.size(); ++i) {
    bool takes_next = false;
    if (is_preprocessor_option(flags[i], takes_next)) {
      i += takes_next;
      continue;
    }
    argv.push_back(flags[i]);
  }
  argv.insert(argv.end(), {"-c", "-x", "ir", host_ir.string(), "-o", out.string()});
  return argv;
}

std::vector<std::string> link(const Toolchain& tc, const Manifest& m,
                              const std::vector<fs::path>& objects, const fs::path& out,
                              const fs::path& depfile) {
  bool any_cxx = false;
  for (const auto& s : m.sources) any_cxx |= s.language == Language::Cxx;
  std::vector<std::string> argv{(any_cxx ? tc.clangxx : tc.clang).string(), "-fopenmp",
                                "-fopenmp-targets=" + offload_triples(m)};
  for (const auto& t : m.targets) {
    if (!t.is_gpu()) continue;
    argv.insert(argv.end(), {"-Xopenmp-target=" + t.triple, "-march=" + t.arch});
  }
  if (needs_nogpulib(tc, m)) argv.push_back("-nogpulib");
  // lld links a small offload program in about half the time of GNU ld.
  if (m.linker == Manifest::Linker::Lld && tc.lld) argv.push_back("-fuse-ld=lld");
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

}  // namespace ob::clang_openmp
