// Formatting half of `offload-build doctor`: pure functions from DoctorFacts to text,
// plus the small parsers the probes use.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/core.h>

#include "offload_build/toolchain/doctor_facts.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::doctor {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The LLVM major version for Debian package names ("22" when unknown).
std::string major(const DoctorFacts& f) {
  std::string m = short_version(f.llvm_version, 1);
  return m.empty() ? "22" : m;
}

// Rows of cells, each column padded to its widest cell; indented by two spaces.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i) {
      line += ' ';
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 1, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

const ToolFact* tool(const DoctorFacts& f, std::string_view name) {
  for (const auto& t : f.tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool found(const DoctorFacts& f, std::string_view name) {
  const ToolFact* t = tool(f, name);
  return t && t->path;
}

std::string list_or(const std::vector<std::string>& items, std::string_view none) {
  return items.empty() ? std::string(none) : util::join(items, ", ");
}

std::string gpu_capability(const std::optional<fs::path>& runtime) {
  if (runtime) return fmt::format("full OpenMP offload (device runtime {})", runtime->string());
  return fmt::format("bare kernels only (ompx_bare with -nogpulib), no OpenMP device runtime installed (LLVM {} "
                     "has one: scripts/setup.sh --llvm {} unpacks it beside this LLVM)",
                     kRuntimeLlvm, kRuntimeLlvm);
}

std::string visible(const std::vector<std::string>& archs, std::string_view vendor,
                    std::string_view family) {
  if (archs.empty()) {
    return fmt::format("no {} GPU visible here, so {} programs build here but run elsewhere",
                       vendor, family);
  }
  return fmt::format("{} GPU visible: {}", vendor, util::join(archs, ", "));
}

std::string rust_conclusion(const RustFacts& r) {
  if (!r.rustc) {
    return "rust: no rustc found; install nightly (rustup toolchain install nightly) or set "
           "$RUSTC for Rust offload";
  }
  std::string ver = short_version(r.version);
  if (!r.nightly) {
    return fmt::format("rust: rustc {} is not nightly; Rust offload needs -Zoffload from a nightly "
                       "rustc (rustup toolchain install nightly, or set $RUSTC)",
                       ver.empty() ? "(version unknown)" : ver);
  }
  if (!r.accepts_offload) {
    return fmt::format("rust: nightly rustc {} does not know -Zoffload; update the nightly "
                       "(rustup update nightly)", ver);
  }
  std::string head = fmt::format("rust: nightly rustc {} accepts -Zoffload", ver);
  if (rust::choose_flavour(r).flavour == rust::Flavour::ThreePass) {
    return head + " in the newer three-pass flavour (HostMetadata=, Device=, Host=), which "
                  "offload-build does not drive yet; use a nightly whose -Zoffload lists Test";
  }
  switch (r.llvm_offload) {
    case Tri::no:
      return head + "; built without LLVM Offload, so offload-build uses the -Zoffload=Test host "
                    "pass and packages device images itself";
    case Tri::yes:
      return head + " and was built with LLVM Offload, so its own -Zoffload=Device/Host passes work";
    case Tri::unknown:
      break;
  }
  return head + "; LLVM Offload support " + (r.llvm_offload_note.empty() ? "not probed" : r.llvm_offload_note) +
         ", so offload-build uses the -Zoffload=Test host pass and packages device images itself";
}

}  // namespace

std::string parse_version(std::string_view text) {
  for (const auto& line : util::split(text, '\n')) {
    std::string best;
    size_t best_parts = 0;
    for (size_t i = 0; i < line.size();) {
      if (!is_digit(line[i]) || (i > 0 && (is_digit(line[i - 1]) || line[i - 1] == '.'))) {
        ++i;
        continue;
      }
      size_t j = i, parts = 0;
      while (j < line.size() && is_digit(line[j])) {
        while (j < line.size() && is_digit(line[j])) ++j;
        ++parts;
        if (j + 1 < line.size() && line[j] == '.' && is_digit(line[j + 1])) ++j;
        else break;
      }
      if (parts >= 2) {
        std::string v = line.substr(i, j - i);
        // Keep a pre-release suffix: 1.97.0-nightly, 23.0.0git.
        size_t k = j;
        if (k < line.size() && (line[k] == '-' || std::isalpha(static_cast<unsigned char>(line[k])))) {
          size_t s = k + (line[k] == '-' ? 1 : 0), e = s;
          while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '.')) ++e;
          if (e > s) v += line.substr(k, e - k);
          k = e;
        }
        if (parts > best_parts) {
          best = v;
          best_parts = parts;
        }
      }
      i = j;
    }
    if (!best.empty()) return best;
  }
  return "";
}

std::string short_version(std::string_view version, int components) {
  std::string out;
  int seen = 0;
  for (char c : version) {
    if (is_digit(c)) {
      out += c;
    } else if (c == '.' && seen + 1 < components) {
      ++seen;
      out += c;
    } else {
      break;
    }
  }
  return out;
}

std::string libomptarget_version(const fs::path& lib) {
  std::string name = lib.filename().string();
  constexpr std::string_view prefix = "libomptarget.so.";
  if (!util::starts_with(name, prefix) || name.size() == prefix.size()) return "";
  return name.substr(prefix.size());
}

std::vector<std::string> parse_arch_list(std::string_view output) {
  std::vector<std::string> archs;
  for (const auto& raw : util::split(output, '\n')) {
    std::string a = util::trim(raw);
    if (!(util::starts_with(a, "sm_") || util::starts_with(a, "gfx"))) continue;
    if (a.find(' ') != std::string::npos) continue;
    if (std::find(archs.begin(), archs.end(), a) == archs.end()) archs.push_back(a);
  }
  return archs;
}

std::vector<std::string> parse_device_info(std::string_view output) {
  std::vector<std::string> devices;
  bool typed = true;
  for (const auto& raw : util::split(output, '\n')) {
    std::string line = util::trim(raw);
    if (line.size() > 2 && line.front() == '[' && line.back() == ']') {
      devices.push_back(line.substr(1, line.size() - 2));
      typed = false;
    } else if (!typed && !devices.empty() && util::starts_with(line, "Type:")) {
      devices.back() += " (" + util::trim(line.substr(5)) + ")";
      typed = true;
    }
  }
  return devices;
}

std::vector<std::string> parse_offload_settings(std::string_view err) {
  std::vector<std::string> out;
  size_t start = err.find("settings:");
  if (start == std::string_view::npos) return out;
  std::string_view rest = err.substr(start);
  rest = rest.substr(0, std::min(rest.find("was expected"), rest.find('\n')));
  for (size_t i = rest.find('`'); i != std::string_view::npos; i = rest.find('`', i)) {
    size_t end = rest.find('`', i + 1);
    if (end == std::string_view::npos) break;
    out.emplace_back(rest.substr(i + 1, end - i - 1));
    i = end + 1;
  }
  return out;
}

// Fortran: flang's offload compiles split and cache; which programs link
// depends on the LLVM (docs/FORTRAN.md): flang 16 lowers no target region
// with a map clause; flang 19 links GPU programs through
// libomptarget.devicertl.a; none links for the host device.
std::string fortran_conclusion(const DoctorFacts& f) {
  if (!f.root || !f.flang_found)
    return "fortran: no flang in the toolchain; install flang-" + major(f) + " for Fortran offload compiles";
  const std::string n = major(f);
  if (std::atoi(n.c_str()) < 19)
    return "fortran: flang-new " + n + " does not lower OpenMP target regions with map clauses (its \"not yet "
           "implemented: OpenMP Block construct clauses\"): Fortran offload needs flang 19 or newer";
  const std::string host = "flang's kernels call __kmpc_target_init and other OpenMP device-runtime entry points that no "
                           "installed runtime provides for the host device";
  std::vector<std::string> gpus;
  if (f.nvptx_runtime) gpus.emplace_back("nvptx64");
  if (f.amdgcn_runtime) gpus.emplace_back("amdgcn");
  if (f.devicertl_found && !gpus.empty())
    return "fortran: flang compiles offload code (split and cached) and links programs for " + util::join(gpus, " and ") +
           " (libomptarget.devicertl.a), not for the host device: " + host +
           (n == "19" ? "; flang 19 does not yet lower composite constructs (target teams distribute parallel do)" : "");
  return "fortran: flang compiles offload code (split and cached), but cannot link an offload program: " + host +
         ", and there is no GPU device runtime";
}

std::vector<std::string> conclusions(const DoctorFacts& f) {
  std::vector<std::string> out;
  const bool complete = f.root && !f.toolchain_error;
  if (!complete) {
    out.push_back("host (x86_64): cannot build until the LLVM toolchain is complete (error below)");
  } else if (!f.libomptarget) {
    out.push_back(fmt::format(
        "host (x86_64): compiles, but cannot link or run: no libomptarget.so in {}; install "
        "liboffload-{}-dev", (*f.root / "lib").string(), major(f)));
  } else {
    out.push_back("host (x86_64): full OpenMP offload; programs run here through libomptarget's "
                  "host plugin");
  }
  if (!complete) {
    out.push_back("nvptx64: cannot build (LLVM toolchain incomplete)");
    out.push_back("amdgcn: cannot build (LLVM toolchain incomplete)");
  } else {
    std::string nv;
    if (!f.cuda_path || !f.nvlink_found) {
      nv = "nvptx64: cannot link: no CUDA ptxas/nvlink found (install the CUDA toolkit at "
           "/usr/local/cuda or put ptxas on PATH); compiles " + gpu_capability(f.nvptx_runtime);
    } else if (!found(f, "clang-nvlink-wrapper")) {
      nv = "nvptx64: cannot link: clang-nvlink-wrapper not found (install clang-tools-" +
           major(f) + "); compiles " + gpu_capability(f.nvptx_runtime);
    } else {
      nv = "nvptx64: " + gpu_capability(f.nvptx_runtime) + "; device link uses CUDA at " +
           f.cuda_path->string();
    }
    out.push_back(nv + "; " + visible(f.gpus.nvptx_archs, "NVIDIA", "nvptx64"));
    std::string amd = f.lld_found ? "amdgcn: " + gpu_capability(f.amdgcn_runtime) +
                                        "; device link uses ld.lld"
                                  : "amdgcn: cannot link: ld.lld not found (install lld-" +
                                        major(f) + "); compiles " +
                                        gpu_capability(f.amdgcn_runtime);
    out.push_back(amd + "; " + visible(f.gpus.amdgpu_archs, "AMD", "amdgcn"));
  }
  out.push_back(fortran_conclusion(f));
  out.push_back(rust_conclusion(f.rust));
  return out;
}

int exit_code(const DoctorFacts& f) {
  return f.root && !f.toolchain_error && f.libomptarget ? 0 : 1;
}

std::string format_report(const DoctorFacts& f) {
  std::string out = "offload-build doctor\n";
  if (f.root && !f.toolchain_error) {
    out += fmt::format("toolchain: {} (LLVM {})\n", f.root->string(),
                       f.llvm_version.empty() ? "version unknown" : f.llvm_version);
  } else {
    out += fmt::format("toolchain: {}\n",
                       f.root ? f.root->string() + " (unusable: see the error at the end)"
                              : std::string("not found"));
  }

  std::vector<std::vector<std::string>> rows;
  for (const auto& t : f.tools) {
    if (t.path) rows.push_back({t.name, t.version.empty() ? "?" : t.version, t.path->string()});
    else rows.push_back({t.name, "-", "not found"});
  }
  out += "\nTools\n" + table(rows);

  const RustFacts& r = f.rust;
  rows.clear();
  if (!r.rustc) {
    rows.push_back({"rustc", "not found ($RUSTC, rustup nightly, PATH)"});
  } else {
    rows.push_back({"rustc", fmt::format("{} (from {})", r.rustc->string(), r.origin)});
    rows.push_back({"version", r.version_line.empty() ? "unknown" : r.version_line});
    rows.push_back({"nightly", r.nightly ? "yes" : "no"});
    if (r.nightly) {
      rows.push_back({"-Zoffload", r.accepts_offload
                                       ? "accepted (" + list_or(r.offload_settings, "settings unknown") + ")"
                                       : "not accepted (unknown unstable option)"});
      if (r.accepts_offload) {
        std::string v = r.llvm_offload == Tri::yes ? "yes" : r.llvm_offload == Tri::no ? "no" : "unknown";
        if (!r.llvm_offload_note.empty()) v += " (" + r.llvm_offload_note + ")";
        rows.push_back({"LLVM Offload", v});
      }
    }
  }
  out += "\nRust\n" + table(rows);

  rows.clear();
  rows.push_back({"x86_64-unknown-linux-gnu",
                  f.libomptarget ? "host plugin: yes (" + f.libomptarget->string() + ")"
                                 : "host plugin: no (libomptarget.so not found)"});
  auto runtime = [](const std::optional<fs::path>& rt, const std::vector<std::string>& archs) {
    if (!rt) return std::string("none");
    if (archs.empty()) return rt->string();
    return fmt::format("{} archs, {} .. {}, in {}", archs.size(), archs.front(), archs.back(),
                       rt->parent_path().string());
  };
  rows.push_back({"nvptx64-nvidia-cuda", runtime(f.nvptx_runtime, f.nvptx_archs)});
  rows.push_back({"amdgcn-amd-amdhsa", runtime(f.amdgcn_runtime, f.amdgcn_archs)});
  out += "\nDevice runtimes\n" + table(rows);

  rows.clear();
  for (const auto& [root, has] : f.llvms) rows.push_back({root.string(), has});
  if (!rows.empty()) out += "\nLLVMs installed here (point \"toolchain\" or OFFLOAD_BUILD_LLVM at one)\n" + table(rows);

  rows.clear();
  auto ran = [](bool did, const std::vector<std::string>& items) {
    return did ? list_or(items, "none visible") : std::string("not run (tool not found)");
  };
  rows.push_back({"nvptx-arch", ran(f.gpus.nvptx_arch_ran, f.gpus.nvptx_archs)});
  rows.push_back({"amdgpu-arch", ran(f.gpus.amdgpu_arch_ran, f.gpus.amdgpu_archs)});
  rows.push_back({"llvm-offload-device-info", ran(f.gpus.device_info_ran, f.gpus.offload_devices)});
  out += "\nGPUs visible\n" + table(rows);

  out += "\nConclusions\n";
  for (const auto& c : conclusions(f)) out += "  " + c + '\n';

  out += '\n';
  if (exit_code(f) == 0) {
    out += "ok: the host-device pipeline can build and run here\n";
  } else if (f.toolchain_error) {
    out += "error: " + *f.toolchain_error + '\n';
  } else if (!f.root) {
    out += "error: no LLVM toolchain found\n";
  } else {
    out += fmt::format("error: libomptarget.so not found in {}; install liboffload-{}-dev "
                       "(scripts/setup.sh does)\n",
                       (*f.root / "lib").string(), major(f));
  }
  return out;
}

}  // namespace ob::toolchain::doctor
