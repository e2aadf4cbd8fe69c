#include "offload_build/toolchain/frontends/clang_scan.hpp"

#include <algorithm>
#include <string_view>

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

std::optional<scan_deps::Entry> batch_scan_of(const std::vector<std::string>& scan_argv) {
  // clang-scan-deps was measured to read the same files as a cc1 scan and
  // as a driver's -M of a host compile; a driver's -M of a device-only one
  // lists system headers it does not (that scan runs alone).
  const size_t n = scan_argv.size();
  if (n >= 3 && scan_argv[1] == "-cc1") {
    for (size_t i = 2; i + 1 < n; ++i)
      if (scan_argv[i] == "-dependency-file") return scan_deps::Entry{scan_argv, scan_argv[i + 1]};
    return std::nullopt;
  }
  if (n < 5 || scan_argv[n - 3] != "-M" || scan_argv[n - 2] != "-MF") return std::nullopt;
  for (const auto& a : scan_argv)
    if (a == "--offload-device-only" || a == "--cuda-device-only" || a == "-E") return std::nullopt;
  scan_deps::Entry b{{scan_argv.begin(), scan_argv.end() - 3}, scan_argv[n - 1]};
  b.argv.push_back("-c");
  return b;
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

}  // namespace ob::toolchain::clang_cli
