#include "offload_build/toolchain/frontends/clang_scan.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ob::toolchain::clang_cli {

namespace {

bool one_of(std::string_view a, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), a) != set.end();
}

// cc1: the action becomes -Eonly, the depfile ours (with system headers).
std::optional<std::vector<std::string>> scan_cc1(const std::vector<std::string>& argv, const std::string& depfile) {
  std::vector<std::string> out{argv[0], argv[1]};
  bool action = false, dep = false, sys = false;
  for (size_t i = 2; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (one_of(a, {"-emit-obj", "-emit-llvm-bc", "-emit-llvm", "-S", "-emit-llvm-only", "-emit-codegen-only"})) {
      if (!action) out.push_back("-Eonly");
      action = true;
    } else if (a == "-dependency-file" && i + 1 < argv.size()) {
      out.insert(out.end(), {a, depfile});
      ++i;
      dep = true;
    } else if (a == "-o" && i + 1 < argv.size()) {
      ++i;
    } else {
      sys = sys || a == "-sys-header-deps";
      out.push_back(a);
    }
  }
  if (!action) return std::nullopt;
  if (!dep) out.insert(out.begin() + 2, {"-dependency-file", depfile, "-MT", "scan"});
  if (!sys) out.insert(out.begin() + 2, "-sys-header-deps");
  return out;
}

}  // namespace

std::optional<std::vector<std::string>> dependency_scan_argv(const std::vector<std::string>& argv,
                                                             const std::string& depfile) {
  if (argv.size() < 2) return std::nullopt;
  if (argv[1] == "-cc1") return scan_cc1(argv, depfile);
  std::vector<std::string> out{argv[0]};
  bool compile = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-c" || a == "-S") {
      compile = true;
    } else if (one_of(a, {"-o", "-MF", "-MT", "-MQ"}) && i + 1 < argv.size()) {
      ++i;
    } else if (one_of(a, {"-MD", "-MMD", "-MP", "-M", "-MM"})) {
    } else if (a.size() > 2 && ((a.starts_with("-o") && !a.starts_with("-objc")) || a.starts_with("-MF") || a.starts_with("-MT") ||
                                a.starts_with("-MQ"))) {
    } else if (a.starts_with("-Wp,-M")) {
    } else {
      out.push_back(a);
    }
  }
  if (!compile) return std::nullopt;
  out.insert(out.end(), {"-M", "-MF", depfile});
  return out;
}

std::optional<BatchScan> batch_scan_of(const std::vector<std::string>& scan_argv) {
  // clang-scan-deps was measured to read the same files as a cc1 scan and
  // as a driver's -M of a host compile; a driver's -M of a device-only one
  // lists system headers it does not (that scan runs alone).
  const size_t n = scan_argv.size();
  if (n >= 3 && scan_argv[1] == "-cc1") {
    for (size_t i = 2; i + 1 < n; ++i)
      if (scan_argv[i] == "-dependency-file") return BatchScan{scan_argv, scan_argv[i + 1]};
    return std::nullopt;
  }
  if (n < 5 || scan_argv[n - 3] != "-M" || scan_argv[n - 2] != "-MF") return std::nullopt;
  for (const auto& a : scan_argv)
    if (a == "--offload-device-only" || a == "--cuda-device-only" || a == "-E") return std::nullopt;
  BatchScan b{{scan_argv.begin(), scan_argv.end() - 3}, scan_argv[n - 1]};
  b.argv.push_back("-c");
  return b;
}

std::string batch_entry_name(size_t n) { return fmt::format("ob-scan-{}", n); }

std::vector<std::string> scan_deps_argv(const std::string& tool, const std::string& db, const std::string& out,
                                        size_t threads) {
  return {tool, "-compilation-database=" + db, "-format=experimental-full", "-j", std::to_string(threads), "-o", out};
}

std::optional<std::map<size_t, std::vector<std::string>>> read_scan_deps(std::string_view json) {
  const auto doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("translation-units")) return std::nullopt;
  std::map<size_t, std::set<std::string>> files;
  for (const auto& tu : doc["translation-units"]) {
    if (!tu.is_object() || !tu.contains("commands") || !tu["commands"].is_array()) return std::nullopt;
    for (const auto& c : tu["commands"]) {
      const std::string name = c.value("input-file", "");
      constexpr std::string_view prefix = "ob-scan-";
      if (!name.starts_with(prefix) || !c.contains("file-deps") || !c["file-deps"].is_array()) return std::nullopt;
      size_t n = 0;
      for (char d : name.substr(prefix.size())) {
        if (d < '0' || d > '9' || n > 1000000) return std::nullopt;
        n = n * 10 + size_t(d - '0');
      }
      for (const auto& f : c["file-deps"])
        if (f.is_string()) files[n].insert(f.get<std::string>());
    }
  }
  std::map<size_t, std::vector<std::string>> out;
  for (auto& [n, set] : files) out[n] = {set.begin(), set.end()};
  return out;
}

std::optional<std::string> machine_dependent_option(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const size_t eq = a.find('=');
    if (eq != std::string::npos &&
        one_of(std::string_view(a).substr(0, eq), {"-march", "-mtune", "-mcpu", "--offload-arch", "-offload-arch",
                                                    "--cuda-gpu-arch"})) {
      // --offload-arch takes a comma-separated list.
      std::string_view list = std::string_view(a).substr(eq + 1);
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        if (list.substr(at, comma - at) == "native") return a;
        at = comma + 1;
      }
    }
    if (i + 1 < argv.size() && argv[i + 1] == "native" &&
        one_of(a, {"-target-cpu", "-tune-cpu", "-march", "-mcpu", "-mtune", "--offload-arch"}))
      return a + " native";
  }
  return std::nullopt;
}

const std::string& native_cpu() {
  static const std::string cpu = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string out, line;
    while (std::getline(in, line)) {
      if (line.empty()) break;  // the first processor's block
      const std::string_view name = std::string_view(line).substr(0, line.find(':'));
      for (std::string_view field : {"vendor_id", "cpu family", "model", "model name", "flags", "CPU implementer",
                                     "CPU architecture", "CPU variant", "CPU part", "Features", "isa", "cpu"})
        if (name.substr(0, name.find_last_not_of(" \t") + 1) == field) out += line + "\n";
    }
    return out.empty() ? std::string("unknown cpu") : out;
  }();
  return cpu;
}

}  // namespace ob::toolchain::clang_cli
