#include "offload_build/toolchain/frontends/rustc.hpp"

#include <cctype>

namespace ob::toolchain::rustc {

namespace {

void append(std::vector<std::string>& argv, const std::vector<std::string>& more) {
  argv.insert(argv.end(), more.begin(), more.end());
}

bool is_library_path(const std::string& lib) {
  return lib.find('/') != std::string::npos || lib.find(".a") != std::string::npos ||
         lib.find(".so") != std::string::npos;
}

}  // namespace

std::string crate_name(std::string_view name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::string device_crate_type(const manifest::Target&) { return "staticlib"; }
std::string device_emit_kind(const manifest::Target& t) { return t.is_gpu() ? "llvm-bc" : "link"; }
std::string device_output_suffix(const manifest::Target& t) { return t.is_gpu() ? ".bc" : ".a"; }
std::string device_image_suffix(const manifest::Target& t) { return t.is_gpu() ? ".bc" : ".o"; }
bool needs_device_link(const manifest::Target& t) { return !t.is_gpu(); }

fs::path device_mir(const fs::path& out) { return fs::path(out).replace_extension(".mir"); }
fs::path device_crate_object(const fs::path& out) { return fs::path(out).replace_extension(".crate.o"); }

std::vector<std::string> device_side_emits(const manifest::Target& t, const fs::path& out) {
  std::vector<std::string> argv{"--emit=mir=" + device_mir(out).string()};
  if (needs_device_link(t)) argv.push_back("--emit=obj=" + device_crate_object(out).string());
  return argv;
}

std::vector<std::string> device_link(const Toolchain& tc, const manifest::Target& target,
                                     const fs::path& crate_object, const fs::path& archive, const fs::path& out) {
  return {tc.clang.string(), "--target=" + target.triple, "-r", "-nostdlib", "-Wno-override-module",
          "-o", out.string(), crate_object.string(), archive.string(),
          tc.rust_device_stub.value_or("rust-device-stub.ll").string()};
}

std::vector<std::string> device_codegen_flags(const rust::RustToolchain& rust,
                                              const std::string& device_cfg, const manifest::Target& t,
                                              bool fat_lto) {
  std::vector<std::string> argv;
  if (t.is_gpu()) argv.push_back("-Ctarget-cpu=" + t.arch);
  argv.insert(argv.end(), {"--cfg", device_cfg, "-Cpanic=abort", "-Ccodegen-units=1"});
  // One fully linked module: a GPU's bitcode must not carry ThinLTO data (ptxas
  // cannot read it), and the host device's archive member must hold every
  // `core` function the kernels call (a debug build's bounds checks included).
  if (fat_lto) argv.push_back("-Clto=fat");
  if (rust.flavour == rust::Flavour::Native) argv.insert(argv.end(), {"-Zunstable-options", "-Zoffload=Device"});
  return argv;
}

std::vector<std::string> host_mir_emits(const std::optional<fs::path>& mir) {
  return {"-Zmir-include-spans=on", mir ? "--emit=mir=" + mir->string() : "--emit=mir"};
}

fs::path linker(const Toolchain& tc) { return tc.clang; }

std::vector<std::string> host_link_flags(const Toolchain& tc, const std::vector<manifest::Target>& targets,
                                         const std::optional<fs::path>& embedded_object,
                                         const std::optional<fs::path>& native_host_out) {
  std::vector<std::string> argv{"-Zunstable-options"};
  argv.push_back(native_host_out ? "-Zoffload=Host=" + native_host_out->string() : "-Zoffload=Test");
  argv.insert(argv.end(), {"-Clinker=" + linker(tc).string(), "-Clink-arg=--offload-link"});
  if (embedded_object) argv.push_back("-Clink-arg=" + embedded_object->string());
  bool nvptx = false;
  for (const auto& t : targets) nvptx |= t.family() == manifest::TargetFamily::Nvptx;
  if (nvptx && tc.cuda_path) argv.push_back("-Clink-arg=--cuda-path=" + tc.cuda_path->string());
  argv.insert(argv.end(), {"-Clink-arg=-L" + tc.lib_dir.string(), "-Clink-arg=-lomptarget",
                           "-Clink-arg=-Wl,-rpath," + tc.lib_dir.string()});
  return argv;
}

std::vector<std::string> cfg_flags(const manifest::Manifest& m) {
  std::vector<std::string> argv;
  for (const auto& def : m.defines) {
    const size_t eq = def.find('=');
    argv.push_back("--cfg");
    argv.push_back(eq == std::string::npos ? def
                                           : def.substr(0, eq) + "=\"" + def.substr(eq + 1) + "\"");
  }
  return argv;
}

std::vector<std::string> user_link_flags(const manifest::Manifest& m) {
  std::vector<std::string> argv;
  for (const auto& f : m.link_flags) argv.push_back("-Clink-arg=" + f);
  for (const auto& lib : m.libs) argv.push_back(is_library_path(lib) ? "-Clink-arg=" + lib : "-l" + lib);
  return argv;
}

std::vector<std::string> device_compile(const Toolchain& tc, const manifest::Manifest& m,
                                        const fs::path& crate_root, const manifest::Target& target,
                                        const fs::path& out, const fs::path& depfile) {
  std::vector<std::string> argv{tc.rust->rustc.string(), "--crate-name", crate_name(m.name),
                                "--crate-type", device_crate_type(target), "--target",
                                target.triple};
  append(argv, device_codegen_flags(*tc.rust, m.device_cfg, target));
  append(argv, cfg_flags(m));
  append(argv, m.flags);
  append(argv, m.device_flags);
  // One --emit per file, so each path is a whole "KIND=PATH" argument.
  argv.push_back("--emit=" + device_emit_kind(target) + "=" + out.string());
  append(argv, device_side_emits(target, out));
  argv.push_back("--emit=dep-info=" + depfile.string());
  argv.push_back(crate_root.string());
  return argv;
}

std::vector<std::string> embed_stub(const fs::path& stub) { return {"touch", stub.string()}; }

std::vector<std::string> embed(const Toolchain& tc, const fs::path& stub, const fs::path& package,
                               const fs::path& out) {
  return {tc.clang.string(), "-Wno-override-module", "-c", "-x", "ir", stub.string(),
          "-Xclang", "-fembed-offload-object=" + package.string(), "-o", out.string()};
}

std::vector<std::string> host_link(const Toolchain& tc, const manifest::Manifest& m,
                                   const fs::path& crate_root,
                                   const std::optional<fs::path>& embedded_object,
                                   const std::optional<fs::path>& native_host_out,
                                   const fs::path& out, const fs::path& depfile, const fs::path& mir) {
  std::vector<std::string> argv{tc.rust->rustc.string(), "--crate-name", crate_name(m.name),
                                "--crate-type", "bin"};
  append(argv, cfg_flags(m));
  append(argv, m.flags);
  append(argv, m.host_flags);
  argv.push_back("-Clto=fat");  // -Zoffload needs it
  append(argv, host_link_flags(tc, m.targets, embedded_object, native_host_out));
  append(argv, user_link_flags(m));
  argv.push_back("--emit=link=" + out.string());
  append(argv, host_mir_emits(mir));
  argv.push_back("--emit=dep-info=" + depfile.string());
  argv.push_back(crate_root.string());
  return argv;
}

}  // namespace ob::toolchain::rustc
