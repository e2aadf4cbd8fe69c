// Target-selecting compiler options in a manifest's flags (-fopenmp,
// -fopenmp-targets=, --offload-arch=, -Xopenmp-target...): offload-build
// writes those itself from "targets", so a copy in "flags" is an error that
// names the "targets" entries meaning the same. The manifest stage calls it
// through ManifestOptions (frontend::manifest_options()).
#include "offload_build/toolchain/frontends/clang_flags.hpp"

#include <algorithm>
#include <map>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_flags {

namespace {

using util::starts_with;

bool selects_targets(const std::string& flag) {
  return flag == "-fopenmp" || starts_with(flag, "-fopenmp=") || flag == "-fno-openmp" ||
         starts_with(flag, "-fopenmp-targets=") || starts_with(flag, "--offload-targets=") ||
         starts_with(flag, "--offload-arch=") || starts_with(flag, "-Xopenmp-target");
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const auto& n : names) q.push_back("\"" + n + "\"");
  return "[" + util::join(q, ", ") + "]";
}

}  // namespace

std::vector<std::string> targets_for_flags(const std::vector<std::string>& flags) {
  std::vector<std::string> triples, archs;
  std::map<std::string, std::string> march;  // triple ("" for the implicit form) -> arch
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& f = flags[i];
    auto list = [&](std::vector<std::string>& into) {
      for (const auto& x : util::split(f.substr(f.find('=') + 1), ','))
        if (!x.empty()) into.push_back(x);
    };
    if (starts_with(f, "-fopenmp-targets=") || starts_with(f, "--offload-targets=")) list(triples);
    else if (starts_with(f, "--offload-arch=")) list(archs);
    else if ((f == "-Xopenmp-target" || starts_with(f, "-Xopenmp-target=")) && i + 1 < flags.size() &&
             starts_with(flags[i + 1], "-march="))
      march[f.size() > 16 ? f.substr(16) : ""] = flags[++i].substr(7);
  }
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& a : archs)
    if (a != "native") add(a);
  for (const auto& t : triples) {
    if (t == manifest::kHostTriple) {
      add("host");
    } else if (auto it = march.count(t) ? march.find(t) : march.find(""); it != march.end()) {
      add(it->second);
    } else if (archs.empty()) {
      add(t == manifest::kNvptxTriple ? "sm_XX" : t == manifest::kAmdgcnTriple ? "gfxNNN" : t + ":ARCH");
    }
  }
  return out;
}

std::optional<std::pair<size_t, std::string>> target_flag_problem(
    const std::string& key, const std::vector<std::string>& flags) {
  std::vector<std::pair<size_t, std::string>> found;  // (index, as written with its value)
  for (size_t i = 0; i < flags.size(); ++i) {
    if (!selects_targets(flags[i])) continue;
    std::string spelled = flags[i];
    const bool takes_next = flags[i] == "-Xopenmp-target" || starts_with(flags[i], "-Xopenmp-target=");
    if (takes_next && i + 1 < flags.size()) spelled += " " + flags[i + 1];
    found.emplace_back(i, spelled);
    if (takes_next) ++i;
  }
  if (found.empty()) return std::nullopt;
  std::string msg = "\"" + key + "\" entry \"" + flags[found.front().first] +
                    "\" selects offload targets, which offload-build sets from \"targets\" "
                    "(it adds -fopenmp and each target's options itself); remove it";
  std::vector<std::string> others;
  for (size_t k = 1; k < found.size(); ++k) others.push_back(found[k].second);
  if (!others.empty()) msg += " (and " + util::join(others, ", ") + ")";
  const auto targets = targets_for_flags(flags);
  if (!targets.empty()) msg += " and use \"targets\": " + quoted_list(targets);
  return std::pair(found.front().first, msg);
}

std::vector<std::string> host_ir_probe_argv(const std::filesystem::path& compiler,
                                            const std::filesystem::path& source) {
  // flang's driver takes a Fortran source by its extension.
  const bool c = source.extension() == ".c";
  std::vector<std::string> argv{compiler.string(), "-fopenmp",
                                "-fopenmp-targets=" + std::string(manifest::kHostTriple), "--offload-host-only"};
  if (c) argv.insert(argv.end(), {"-x", "c"});
  argv.insert(argv.end(), {"-S", "-emit-llvm", "-o", "-", source.string()});
  return argv;
}

}  // namespace ob::toolchain::clang_flags
