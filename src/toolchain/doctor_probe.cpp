// Probing half of `offload-build doctor`: run each tool's `--version` and a few
// cheap rustc probes, and read the filesystem, into DoctorFacts.
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include <fmt/core.h>

#include "offload_build/exec/subprocess.hpp"
#include "offload_build/toolchain/doctor_facts.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::doctor {

namespace {

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<exec::Captured> run_probe(std::vector<std::string> argv, const fs::path& cwd = {},
                                        decltype(Command::env) env = {}) {
  Command cmd;
  cmd.argv = std::move(argv);
  cmd.cwd = cwd;
  cmd.env = std::move(env);
  auto r = exec::capture(cmd);
  if (!r) return std::nullopt;
  return std::move(r).value();
}

std::string first_line(std::string_view text) {
  return util::trim(text.substr(0, text.find('\n')));
}

// `tool --version` parsed to a version number ("" when it cannot be read).
std::string tool_version(const fs::path& tool) {
  auto out = run_probe({tool.string(), "--version"});
  if (!out) return "";
  std::string v = parse_version(out->out);
  return v.empty() ? parse_version(out->err) : v;
}

ToolFact tool_fact(std::string name, const std::optional<fs::path>& path) {
  ToolFact f{std::move(name), std::nullopt, ""};
  if (path && is_executable(*path)) {
    f.path = *path;
    f.version = tool_version(*path);
  }
  return f;
}

// A private temporary directory, removed when this goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::error_code ec;
    std::string tmpl = (fs::temp_directory_path(ec) / "offload-build-doctor-XXXXXX").string();
    if (!ec && ::mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

void locate_rustc(RustFacts& rust) {
  const char* env = std::getenv("RUSTC");
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "";
  if (env && *env) {
    std::string v = env;
    rust.origin = "$RUSTC";
    if (v.find('/') != std::string::npos) {
      if (is_executable(v)) rust.rustc = fs::path(v);
    } else {
      rust.rustc = find_in_path(v, path);
    }
    return;
  }
  if (find_in_path("rustup", path)) {
    auto out = run_probe({"rustup", "which", "--toolchain", "nightly", "rustc"});
    if (out && out->exit_code == 0) {
      fs::path p = first_line(out->out);
      if (is_executable(p)) {
        rust.rustc = p;
        rust.origin = "rustup nightly";
        return;
      }
    }
  }
  if (auto p = find_in_path("rustc", path)) {
    rust.rustc = *p;
    rust.origin = "PATH";
  }
}

// -Zoffload=Host= on an empty crate reaches the LLVM Offload entry points at once:
// a rustc built without them panics with a message that says so (~0.1-0.4 s).
void probe_llvm_offload(RustFacts& rust) {
  TempDir tmp;
  if (tmp.path.empty()) {
    rust.llvm_offload_note = "not probed (no temporary directory)";
    return;
  }
  std::ofstream(tmp.path / "probe.rs").flush();
  std::ofstream(tmp.path / "host.out").flush();
  auto out = run_probe({rust.rustc->string(), "-Zunstable-options",
                        "-Zoffload=Host=" + (tmp.path / "host.out").string(), "-Clto=fat",
                        "--crate-type", "lib", "--emit=obj", "-o",
                        (tmp.path / "probe.o").string(), (tmp.path / "probe.rs").string()},
                       tmp.path, {{"RUSTC_ICE", "0"}, {"RUST_BACKTRACE", "0"}});
  if (!out) {
    rust.llvm_offload_note = "not probed (rustc did not start)";
  } else if (out->err.find("not built with LLVM Offload support") != std::string::npos) {
    rust.llvm_offload = Tri::no;
    rust.llvm_offload_note = "-Zoffload=Host= panics: not built with LLVM Offload support";
  } else if (out->exit_code == 0) {
    rust.llvm_offload = Tri::yes;
    rust.llvm_offload_note = "-Zoffload=Host= compiles an empty crate";
  } else {
    rust.llvm_offload_note = "not determined (probe failed: " + first_line(out->err) + ")";
  }
}

RustFacts probe_rust() {
  RustFacts rust;
  locate_rustc(rust);
  if (!rust.rustc) return rust;
  const std::string rustc = rust.rustc->string();
  if (auto out = run_probe({rustc, "--version"}); out && out->exit_code == 0) {
    rust.version_line = first_line(out->out);
    rust.version = parse_version(rust.version_line);
  }
  rust.nightly = rust.version.find("nightly") != std::string::npos ||
                 rust.version.find("-dev") != std::string::npos;
  if (!rust.nightly) return rust;

  // A deliberately bad value: rustc answers "unknown unstable option" when it has no
  // -Zoffload, else "incorrect value ... `Host=<Absolute-Path>`, `Device`, `Test` was expected".
  if (auto out = run_probe({rustc, "-Zunstable-options", "-Zoffload=?", "--print", "sysroot"})) {
    if (out->err.find("option `offload`") != std::string::npos || out->exit_code == 0) {
      rust.accepts_offload = true;
      rust.offload_settings = parse_offload_settings(out->err);
    }
  }
  if (!rust.accepts_offload) return rust;
  // The probe fits the two-pass flavour (Host=<path>/host.out, Device, Test); the
  // newer HostMetadata/Device/Host flavour takes other arguments.
  bool host_flag = false, host_metadata = false;
  for (const auto& s : rust.offload_settings) {
    host_flag = host_flag || util::starts_with(s, "Host=");
    host_metadata = host_metadata || util::starts_with(s, "HostMetadata");
  }
  if (host_flag && !host_metadata) probe_llvm_offload(rust);
  else rust.llvm_offload_note = "not probed (unfamiliar -Zoffload settings)";
  return rust;
}

GpuFacts probe_gpus(const std::optional<fs::path>& root) {
  GpuFacts g;
  if (!root) return g;
  const fs::path bin = *root / "bin";
  if (is_executable(bin / "nvptx-arch")) {
    if (auto out = run_probe({(bin / "nvptx-arch").string()})) {
      g.nvptx_arch_ran = true;
      g.nvptx_archs = parse_arch_list(out->out);
    }
  }
  if (is_executable(bin / "amdgpu-arch")) {
    if (auto out = run_probe({(bin / "amdgpu-arch").string()})) {
      g.amdgpu_arch_ran = true;
      g.amdgpu_archs = parse_arch_list(out->out);
    }
  }
  if (is_executable(bin / "llvm-offload-device-info")) {
    if (auto out = run_probe({(bin / "llvm-offload-device-info").string()})) {
      g.device_info_ran = out->exit_code == 0;
      g.offload_devices = parse_device_info(out->out);
    }
  }
  return g;
}

}  // namespace

DoctorFacts probe_facts(const std::optional<fs::path>& toolchain_hint) {
  DoctorFacts f;
  auto search = ToolchainSearch::from_environment(toolchain_hint);
  auto tc = find_toolchain_in(search);
  if (tc) {
    f.root = tc->root;
    f.cuda_path = tc->cuda_path;
  } else {
    f.toolchain_error = tc.error().message;
    f.root = toolchain_root_candidate(search);
    const char* path_env = std::getenv("PATH");
    f.cuda_path = find_cuda("/usr/local/cuda", path_env ? path_env : "");
  }

  auto bin_tool = [&](const char* name) -> std::optional<fs::path> {
    if (!f.root) return std::nullopt;
    return *f.root / "bin" / name;
  };
  for (const char* name : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper",
                           "clang-nvlink-wrapper", "ld.lld", "llvm-objdump"}) {
    f.tools.push_back(tool_fact(name, bin_tool(name)));
  }
  f.llvm_version = f.tools.front().version;
  f.lld_found = f.tools[5].path.has_value();

  ToolFact omp{"libomptarget", std::nullopt, ""};
  if (f.root) f.libomptarget = find_libomptarget(*f.root / "lib");
  if (f.libomptarget) {
    omp.path = f.libomptarget;
    omp.version = libomptarget_version(*f.libomptarget);
    if (omp.version.empty() && bin_tool("llvm-config")) omp.version = tool_version(*bin_tool("llvm-config"));
  }
  f.tools.push_back(omp);

  auto cuda_tool = [&](const char* name) -> std::optional<fs::path> {
    if (!f.cuda_path) return std::nullopt;
    return *f.cuda_path / "bin" / name;
  };
  f.tools.push_back(tool_fact("CUDA ptxas", cuda_tool("ptxas")));
  f.tools.push_back(tool_fact("CUDA nvlink", cuda_tool("nvlink")));
  f.nvlink_found = f.tools.back().path.has_value();

  f.rust = probe_rust();
  f.tools.push_back(ToolFact{"rustc", f.rust.rustc, f.rust.version});

  if (f.root) {
    f.nvptx_runtime = find_device_runtime(*f.root, kNvptxTriple);
    f.amdgcn_runtime = find_device_runtime(*f.root, kAmdgcnTriple);
  }
  f.gpus = probe_gpus(f.root);
  return f;
}

}  // namespace ob::doctor
