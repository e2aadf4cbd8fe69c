#include "offload_build/toolchain/frontends/clang_scan.hpp"

#include <algorithm>
#include <array>
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

}  // namespace ob::toolchain::clang_cli
