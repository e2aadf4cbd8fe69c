// What a scanned clang command line asks for: whether it is an offload
// compile offload-build splits, and for which targets. The rules follow the
// clang 22 driver (checked against it, see docs/LAUNCHER.md):
//   --offload-arch=A,B        one device per arch (sm_* nvptx64, gfx* amdgcn, native)
//   -fopenmp-targets=T1,T2    one device per triple; a triple takes its arch
//                             from -Xopenmp-target=T -march=A (last wins), else
//                             native (GPU) or generic (the host device)
//   both                      every arch for every triple (all of one GPU family)
// Anything else clang would reject or that offload-build does not model runs unchanged.
#include <algorithm>
#include <map>
#include <set>

#include "clang_cli_internal.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::clang_cli {

namespace {

std::optional<manifest::TargetFamily> triple_family(std::string_view triple) {
  if (triple == manifest::kHostTriple) return manifest::TargetFamily::HostDevice;
  if (triple == manifest::kNvptxTriple) return manifest::TargetFamily::Nvptx;
  if (triple == manifest::kAmdgcnTriple) return manifest::TargetFamily::Amdgcn;
  return std::nullopt;
}

// A GPU arch spelling (sm_90, gfx90a) as a target; nullopt for anything else.
std::optional<manifest::Target> gpu_arch(const std::string& arch) {
  auto t = manifest::resolve_target(arch);
  if (!t || !t->is_gpu() || t->arch != arch) return std::nullopt;
  return *t;
}

struct Resolved {
  std::vector<manifest::Target> targets;
  std::vector<std::string> native;
  std::string problem;  // non-empty: pass through
};

Resolved resolve_targets(const Scan& s) {
  Resolved r;
  std::map<std::string, std::string> march;  // triple ("" implicit) -> -march value
  bool implicit_other = false;
  for (const auto& a : s.req.args) {
    if (a.kind != ArgKind::XOpenmpTarget) continue;
    if (util::starts_with(a.value, "-march=")) march[a.triple] = a.value.substr(7);
    else if (a.triple.empty()) implicit_other = true;
  }
  std::vector<std::string> triples;
  for (const auto& t : s.triples) {
    if (!triple_family(t)) {
      r.problem = "offload triple " + t + " (offload-build splits " + std::string(manifest::kHostTriple) +
                  ", " + std::string(manifest::kNvptxTriple) + " and " + std::string(manifest::kAmdgcnTriple) + ")";
      return r;
    }
    if (std::find(triples.begin(), triples.end(), t) == triples.end()) triples.push_back(t);
  }
  std::vector<manifest::Target> arch_targets;
  bool arch_native = false;
  for (const auto& a : s.archs) {
    if (a == "native") { arch_native = true; continue; }
    auto t = gpu_arch(a);
    if (!t) { r.problem = "--offload-arch=" + a + " is not an sm_* or gfx* arch"; return r; }
    arch_targets.push_back(*t);
  }

  if (!s.archs.empty()) {
    if (!march.empty()) { r.problem = "-Xopenmp-target -march= together with --offload-arch"; return r; }
    if (triples.empty()) {
      r.targets = arch_targets;
      if (arch_native) r.native.push_back("");
    } else {
      for (const auto& triple : triples) {
        if (triple == manifest::kHostTriple) {
          // The host device has no system GPU arch to find: `native` leaves
          // it "generic" (clang 22 gives it an explicit GPU arch, not modeled).
          if (!arch_targets.empty()) {
            r.problem = "--offload-arch=" + arch_targets.front().arch + " with the host offload triple";
            return r;
          }
          r.targets.push_back({triple, "generic"});
          continue;
        }
        for (const auto& t : arch_targets) {
          if (t.triple != triple) { r.problem = "--offload-arch=" + t.arch + " for triple " + triple; return r; }
          r.targets.push_back(t);
        }
        if (arch_native) r.native.push_back(triple);
      }
    }
  } else {
    if (march.count("") && triples.size() > 1) {
      r.problem = "-Xopenmp-target without a triple for several triples";
      return r;
    }
    for (const auto& triple : triples) {
      if (triple == manifest::kHostTriple) {
        // -Xopenmp-target=TRIPLE -march=CPU: the host device's CPU, which
        // clang also writes as the image's arch.
        auto it = march.count(triple) ? march.find(triple) : march.find("");
        r.targets.push_back({triple, it == march.end() ? "generic" : it->second});
        continue;
      }
      auto it = march.count(triple) ? march.find(triple) : march.find("");
      if (it == march.end()) { r.native.push_back(triple); continue; }
      auto t = gpu_arch(it->second);
      if (!t || t->triple != triple) { r.problem = "-march=" + it->second + " for " + triple; return r; }
      r.targets.push_back(*t);
    }
  }
  std::set<std::string> device_triples;
  for (const auto& t : r.targets) device_triples.insert(t.triple);
  for (const auto& n : r.native) device_triples.insert(n);
  if (implicit_other && (device_triples.size() > 1 || device_triples.count(""))) {
    r.problem = "-Xopenmp-target without a triple for several triples";
    return r;
  }
  // Each target once, in first-seen order.
  std::vector<manifest::Target> unique;
  for (const auto& t : r.targets)
    if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
  r.targets = std::move(unique);
  return r;
}

}  // namespace

namespace {

Parsed refuse(std::string why, const char* code, std::string option = {}) {
  return Parsed{std::nullopt, std::move(why), code, std::move(option)};
}

// The device runtime bitcode a --libomptarget-*-bc-path= names: no depfile
// lists it, so its content is keyed (the directory's file for each arch of
// `targets`).
void key_device_libraries(Scan& s, const std::vector<manifest::Target>& targets) {
  for (const auto& a : s.req.args) {
    if (a.kind != ArgKind::DeviceFamily || !util::starts_with(a.tokens.front(), "--libomptarget-")) continue;
    std::error_code ec;
    if (!fs::is_directory(a.value, ec)) {
      s.req.keyed_files.push_back(a.value);
      continue;
    }
    const std::string family = a.triple == manifest::kNvptxTriple ? "nvptx" : "amdgpu";
    for (const auto& t : targets) {
      if (t.triple != a.triple) continue;
      for (const auto& name : {"libomptarget-" + family + "-" + t.arch + ".bc", "libomptarget-" + family + ".bc"})
        if (fs::exists(fs::path(a.value) / name, ec)) {
          s.req.keyed_files.push_back((fs::path(a.value) / name).string());
          break;
        }
    }
  }
}

// The one C or C++ source of a compile to an object (s.req.source and
// language set), or why the scan is none.
std::optional<Parsed> take_source(Scan& s) {
  using namespace unchanged;
  if (!s.compile_only) return refuse("not a compile to an object (no -c)", kNotCompile);
  if (s.inputs.empty()) return refuse("no source file", kNotCompile);
  if (s.inputs.size() > 1) return refuse("several inputs", kNotCompile);
  const auto& in = s.inputs.front();
  if (in.lang && *in.lang != "c" && *in.lang != "c++") return refuse("language -x " + *in.lang, kNotOffload);
  const auto ext = manifest::language_from_extension(in.path);
  if (in.lang) s.req.language = *in.lang == "c" ? manifest::Language::C : manifest::Language::Cxx;
  else if (ext && (*ext == manifest::Language::C || *ext == manifest::Language::Cxx)) s.req.language = *ext;
  else return refuse("input " + in.path + " is not a C or C++ source", kNotOffload);
  s.req.source = in.path;
  return std::nullopt;
}

// The caller's depfile options (s.req.deps), or why they are refused.
std::optional<Parsed> take_deps(Scan& s) {
  if (s.req.deps) {
    s.req.deps->file = s.dep_file;
    s.req.deps->targets = s.dep_targets;
    s.req.deps->phony = s.dep_phony;
  } else if (s.dep_file || !s.dep_targets.empty()) {
    return refuse("-MF/-MT without -MD or -MMD", unchanged::kOption, s.dep_file ? "-MF" : "-MT");
  }
  return std::nullopt;
}

}  // namespace

Parsed finish(Scan s) {
  using namespace unchanged;
  if (auto refused = take_source(s)) return *refused;
  if (!s.openmp) return refuse("no -fopenmp", kNotOffload);
  if (s.triples.empty() && s.archs.empty()) return refuse("no offload targets", kNotOffload);
  Resolved r = resolve_targets(s);
  if (!r.problem.empty()) return refuse(r.problem, kTargets);
  if (r.targets.empty() && r.native.empty()) return refuse("no offload targets", kNotOffload);
  s.req.targets = std::move(r.targets);
  s.req.native = std::move(r.native);
  key_device_libraries(s, s.req.targets);
  if (auto refused = take_deps(s)) return *refused;
  if (s.records) {
    // Without -o clang names each device's record after the source and its
    // target; with -o (as build systems write it) every pass shares one name.
    if (!s.req.output && !s.record_file)
      return refuse("optimization records without -o", kOption, "-fsave-optimization-record");
    s.req.opt_record = s.record_file ? *s.record_file
                                     : fs::path(*s.req.output).replace_extension(".opt." + s.record_format).string();
  }
  return Parsed{std::move(s.req), {}, {}, {}};
}

Parsed finish_plain(Scan s) {
  using namespace unchanged;
  if (auto refused = take_source(s)) return *refused;
  if (auto refused = take_deps(s)) return *refused;
  // Files named after the output, which the job writes under a temporary name.
  if (s.records) return refuse("an optimization record (named after the output)", kOption, "-fsave-optimization-record");
  if (s.req.save_temps) return refuse("-save-temps (temporary files named after the source)", kOption, "-save-temps");
  if (s.openmp && (!s.triples.empty() || !s.archs.empty())) {
    const bool native = std::find(s.archs.begin(), s.archs.end(), "native") != s.archs.end();
    const Resolved r = resolve_targets(s);
    if (native || !r.native.empty())
      return refuse("a native offload arch (what it compiles for depends on this machine's GPUs)", kTargets);
    key_device_libraries(s, r.targets);
  }
  // Under -fopenmp clang names target regions (host fallbacks too) after
  // each file's device and inode: stable names, as in a split.
  s.req.names_kernels = s.openmp;
  return Parsed{std::move(s.req), {}, {}, {}};
}

}  // namespace ob::toolchain::clang_cli
