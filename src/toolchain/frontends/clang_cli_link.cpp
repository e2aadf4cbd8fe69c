// Launcher mode's link: recognizing an OpenMP offload link (clang driving
// clang-linker-wrapper), which offload-build runs as one cached job.
#include <array>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::clang_cli {

namespace {

using util::starts_with;

// Options whose value is the next argument when written alone.
constexpr std::array<std::string_view, 17> kSeparate = {
    "-o", "-L", "-l", "-Xlinker", "-Xopenmp-target", "-u", "-T", "-e", "-z", "--sysroot",
    "-isysroot", "-target", "-B", "-rpath", "--gcc-toolchain", "-resource-dir", "-Xoffload-linker"};

// A driver command that compiles, preprocesses or only asks something.
constexpr std::array<std::string_view, 12> kNotLink = {
    "-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "-###", "-v", "--version", "-shared", "-r", "-"};

bool is_source(const std::string& file) {
  for (std::string_view ext : {".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".i", ".ii", ".ll", ".bc",
                               ".s", ".S", ".rs", ".cu", ".f90", ".f"})
    if (util::ends_with(file, std::string(ext))) return true;
  return false;
}

}  // namespace

LinkParsed parse_link(const std::vector<std::string>& argv) {
  LinkParsed r;
  auto no = [&](std::string why) {
    r.pass_reason = std::move(why);
    return r;
  };
  bool openmp = false, targets = false;
  LinkRequest req;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    for (auto n : kNotLink)
      if (t == n) return no("not a link (" + t + ")");
    if (t == "-fopenmp" || starts_with(t, "-fopenmp=")) openmp = true;
    if (starts_with(t, "-fopenmp-targets=") || starts_with(t, "--offload-arch=") ||
        starts_with(t, "--offload-targets="))
      targets = true;
    if (starts_with(t, "-Xarch_") || starts_with(t, "-Xopenmp-target=")) {
      ++i;  // and its value
      continue;
    }
    bool separate = false;
    for (auto s : kSeparate) separate |= t == s;
    if (separate) {
      if (i + 1 >= argv.size()) return no("option " + t + " without a value");
      if (t == "-o") req.output = argv[i + 1];
      ++i;
      continue;
    }
    if (starts_with(t, "-o") && t.size() > 2) {
      req.output = t.substr(2);
      continue;
    }
    if (!t.empty() && t.front() == '-') continue;
    if (is_source(t)) return no("compiles and links " + t + " in one command");
    req.inputs.push_back(t);
  }
  if (!openmp || !targets) return no("no OpenMP offload targets");
  if (req.inputs.empty()) return no("no input objects");
  if (req.output.empty()) return no("a link without -o");
  r.link = std::move(req);
  return r;
}

}  // namespace ob::clang_cli
