// Launcher mode's link: recognizing an OpenMP offload link (clang driving
// clang-linker-wrapper), which offload-build runs as one cached job, and a
// one-step build (sources compiled and linked by one command), split into a
// compile per source and that link.
#include <algorithm>
#include <array>

#include "clang_cli_internal.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_cli {

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

// Options a compile does not use and warns about ("argument unused during
// compilation", "'linker' input unused"), with a value when `separate`.
bool link_only(std::string_view t, bool& separate) {
  separate = t == "-l" || t == "-L" || t == "-Xlinker" || t == "-rpath" || t == "-u" || t == "-T" ||
             t == "-z" || starts_with(t, "-Xoffload-linker");
  constexpr std::array<std::string_view, 8> exact = {
      "-pie", "-no-pie", "-rdynamic", "-s", "-shared-libgcc", "-static-libgcc", "-static-libstdc++",
      "-static-pie"};
  return separate || starts_with(t, "-l") || starts_with(t, "-L") || starts_with(t, "-Wl,") ||
         starts_with(t, "-fuse-ld=") || starts_with(t, "--ld-path=") ||
         std::find(exact.begin(), exact.end(), t) != exact.end();
}

}  // namespace

BuildParsed parse_build(const std::vector<std::string>& argv) {
  BuildParsed r;
  BuildRequest req;
  req.argv = argv;
  req.link_only.assign(argv.size(), false);
  bool openmp = false, targets = false;
  std::string refused;  // why an offload one-step build is not split
  std::optional<manifest::Language> language;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    for (auto n : kNotLink)
      if (t == n) return r;  // not a one-step build: a compile, a link of -shared, ...
    if (t == "-fopenmp" || t == "-fopenmp=libomp" || t == "-fno-openmp")
      openmp = t != "-fno-openmp";
    if (starts_with(t, "-fopenmp-targets=") || starts_with(t, "--offload-arch=") ||
        starts_with(t, "--offload-targets="))
      targets = true;
    if (t.empty() || t.front() != '-') {
      const auto lang = manifest::language_from_extension(t);
      if (lang && (*lang == manifest::Language::C || *lang == manifest::Language::Cxx)) {
        if (language && *language != *lang) refused = "sources of two languages";
        language = lang;
        req.sources.push_back(i);
      } else if (is_source(t)) {
        refused = "input " + t + " is not a C or C++ source";
      }
      continue;  // otherwise an object or a library: the link's
    }
    if (t == "--" || starts_with(t, "-x")) refused = "option " + t;
    if (starts_with(t, "-M") || starts_with(t, "-save-temps") || starts_with(t, "--save-temps") ||
        starts_with(t, "-fsave-optimization-record") || starts_with(t, "-foptimization-record-"))
      refused = "option " + t + " (it names files after each compile)";
    bool separate = false;
    if (link_only(t, separate)) req.link_only[i] = true;
    separate |= takes_separate_value(t);
    if (starts_with(t, "-o")) req.output = t.size() > 2 ? t.substr(2) : std::string();
    if (!separate) continue;
    if (i + 1 >= argv.size()) return r;  // the compiler reports it
    req.link_only[i + 1] = req.link_only[i];
    if (t == "-o") req.output = argv[i + 1];
    ++i;
  }
  if (!openmp || !targets || req.sources.empty()) return r;
  r.one_step = true;
  if (!refused.empty()) {
    r.pass_reason = "a one-step build with " + refused;
    return r;
  }
  if (req.output && (req.output->empty() || *req.output == "-")) {
    r.pass_reason = "a one-step build writing to stdout";
    return r;
  }
  r.build = std::move(req);
  return r;
}

}  // namespace ob::toolchain::clang_cli

namespace ob::toolchain::frontend {

using clang_cli::takes_separate_value;
using util::starts_with;

std::vector<std::string> BuildRequest::compile_argv(size_t n, const std::string& object) const {
  const BuildRequest& req = *this;
  std::vector<std::string> argv{req.argv.front()};
  for (size_t i = 1; i < req.argv.size(); ++i) {
    const std::string& t = req.argv[i];
    if (req.link_only[i] || std::find(req.sources.begin(), req.sources.end(), i) != req.sources.end())
      continue;
    if (!t.empty() && t.front() != '-') continue;  // an object or library
    if (t == "-o") {
      ++i;
      continue;
    }
    if (starts_with(t, "-o")) continue;
    argv.push_back(t);
    if (takes_separate_value(t) && i + 1 < req.argv.size()) argv.push_back(req.argv[++i]);
  }
  argv.insert(argv.end(), {"-c", req.argv[req.sources[n]], "-o", object});
  return argv;
}

std::vector<std::string> BuildRequest::link_argv(const std::vector<std::string>& objects) const {
  std::vector<std::string> out = argv;
  for (size_t n = 0; n < sources.size(); ++n) out[sources[n]] = objects[n];
  if (!output) out.insert(out.end(), {"-o", "a.out"});
  return out;
}

}  // namespace ob::toolchain::frontend

namespace ob::toolchain::clang_cli {

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
  req.argv = argv;
  r.link = std::move(req);
  return r;
}

}  // namespace ob::toolchain::clang_cli

namespace ob::toolchain::frontend {

std::string output_arg(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "-o" && i + 1 < argv.size()) return argv[i + 1];
    if (starts_with(argv[i], "-o") && argv[i].size() > 2) return argv[i].substr(2);
  }
  return "";
}

std::vector<std::string> LinkRequest::writing(const std::string& out, const std::string& depfile) const {
  std::vector<std::string> argv = this->argv;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "-o" && i + 1 < argv.size()) argv[i + 1] = out;
    else if (starts_with(argv[i], "-o") && argv[i].size() > 2) argv[i] = "-o" + out;
  }
  argv.push_back("-Wl,--dependency-file=" + depfile);
  return argv;
}

}  // namespace ob::toolchain::frontend
