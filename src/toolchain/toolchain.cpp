#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/toolchain/probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>
#include <vector>

#include <fmt/core.h>

#include "offload_build/util/strings.hpp"

namespace ob::toolchain {

namespace {

constexpr std::string_view kInstallAll =
    "clang-22 clang-tools-22 lld-22 llvm-22 libomp-22-dev liboffload-22";

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// `text` as a number of 1-3 digits (an LLVM major), else nullopt.
std::optional<int> llvm_number(std::string_view text) {
  if (text.empty() || text.size() > 3 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoi(std::string(text));
}

// "22" for /usr/lib/llvm-22; the version Debian package names use otherwise.
std::string package_version(const fs::path& root) {
  std::string name = root.filename().string();
  if (name.empty()) name = root.parent_path().filename().string();
  if (util::starts_with(name, "llvm-") && llvm_number(std::string_view(name).substr(5))) return name.substr(5);
  return "22";
}

// The Debian package that ships each required tool.
std::string package_for(std::string_view tool, const std::string& v) {
  if (tool == "clang" || tool == "clang++") return "clang-" + v;
  if (tool == "clang-linker-wrapper") return "clang-tools-" + v;
  if (util::starts_with(tool, "llvm-offload-binary") && std::stoi(v) < 20) return "clang-tools-" + v;
  return "llvm-" + v;  // llvm-offload-binary
}

// Accept the bin directory or the clang binary itself where a root is expected.
fs::path normalize_root(const fs::path& given) {
  if (is_executable(given / "bin" / "clang")) return given;
  if (given.filename() == "bin" && is_executable(given / "clang")) return given.parent_path();
  if (given.filename() == "clang" && given.parent_path().filename() == "bin") {
    return given.parent_path().parent_path();
  }
  return given;
}

// Files matching `prefix*suffix` directly in `dir`, sorted.
std::vector<fs::path> glob_dir(const fs::path& dir, std::string_view prefix,
                               std::string_view suffix) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!is_dir(dir)) return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (util::starts_with(name, prefix) && util::ends_with(name, suffix) &&
        name.size() >= prefix.size() + suffix.size()) {
      out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// clang on PATH, symlinks resolved, as a root that has bin/clang.
std::optional<fs::path> root_of_path_clang(std::string_view path_env) {
  auto clang = find_in_path("clang", path_env);
  if (!clang) return std::nullopt;
  std::error_code ec;
  fs::path real = fs::canonical(*clang, ec);
  if (ec) return std::nullopt;
  return real.parent_path().parent_path();
}

}  // namespace

std::optional<fs::path> find_in_path(std::string_view name, std::string_view path_env) {
  for (const auto& dir : util::split(path_env, ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / name;
    if (is_executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::optional<fs::path> find_cuda(const fs::path& default_root, std::string_view path_env) {
  if (is_executable(default_root / "bin" / "ptxas")) return default_root;
  if (auto ptxas = find_in_path("ptxas", path_env)) return ptxas->parent_path().parent_path();
  return std::nullopt;
}

Toolchain with_cuda_path(Toolchain tc, const std::optional<std::string>& dir, const fs::path& cwd) {
  if (!dir || dir->empty()) return tc;
  const fs::path root = (cwd / *dir).lexically_normal();
  if (is_executable(root / "bin" / "ptxas")) tc.cuda_path = root;
  return tc;
}

std::vector<fs::path> cuda_compile_files(const Toolchain& tc) {
  if (!tc.cuda_path) return {};
  std::vector<fs::path> files{*tc.cuda_path / "bin/ptxas"};
  std::error_code ec;
  if (const fs::path libdevice = *tc.cuda_path / "nvvm/libdevice/libdevice.10.bc"; fs::is_regular_file(libdevice, ec))
    files.push_back(libdevice);
  return files;
}

std::optional<fs::path> find_libomptarget(const fs::path& lib_dir) {
  auto versioned = glob_dir(lib_dir, "libomptarget.so.", "");
  if (!versioned.empty()) return versioned.back();
  std::error_code ec;
  if (fs::exists(lib_dir / "libomptarget.so", ec)) return lib_dir / "libomptarget.so";
  return std::nullopt;
}

namespace {

// Per-triple runtime directories: lib/<triple>/ and lib/clang/<N>/lib/<triple>/.
std::vector<fs::path> runtime_dirs(const fs::path& lib, std::string_view triple) {
  std::vector<fs::path> dirs = {lib / triple};
  for (const auto& clang_ver : glob_dir(lib / "clang", "", "")) dirs.push_back(clang_ver / "lib" / triple);
  return dirs;
}

bool has_rocm_device_libs();

}  // namespace

std::optional<fs::path> find_device_runtime(const fs::path& root, std::string_view triple, std::string_view arch) {
  std::vector<std::string_view> bc_prefixes;
  if (triple == manifest::kNvptxTriple) bc_prefixes = {"libomptarget-nvptx"};
  else if (triple == manifest::kAmdgcnTriple) bc_prefixes = {"libomptarget-amdgpu", "libomptarget-amdgcn"};
  else return std::nullopt;
  // LLVM 16 ships the AMD GPU runtime only as bitcode its driver links at
  // compile time, and only with ROCm's device libraries (its
  // libomptarget.devicertl.a holds nvptx alone): none without them.
  if (triple == manifest::kAmdgcnTriple) {
    const int major = llvm_major(root);
    if (major > 0 && major <= 16 && !has_rocm_device_libs()) return std::nullopt;
  }

  const fs::path lib = root / "lib";
  const std::vector<fs::path> triple_dirs = runtime_dirs(lib, triple);
  // One file for every arch (libomptarget-nvptx.bc), or one per arch (LLVM
  // 16-19: libomptarget-nvptx-sm_90.bc), which serves only its own arch.
  auto find_bc = [&](const fs::path& dir) -> std::optional<fs::path> {
    std::error_code ec;
    for (auto prefix : bc_prefixes) {
      if (arch.empty()) {
        auto hits = glob_dir(dir, prefix, ".bc");
        if (!hits.empty()) return hits.front();
        continue;
      }
      for (const std::string name : {fmt::format("{}-{}.bc", prefix, arch), fmt::format("{}.bc", prefix)})
        if (fs::exists(dir / name, ec)) return dir / name;
    }
    return std::nullopt;
  };
  if (auto bc = find_bc(lib)) return bc;
  for (const auto& dir : triple_dirs) {
    std::error_code ec;
    if (fs::exists(dir / "libompdevice.a", ec)) return dir / "libompdevice.a";
    if (auto bc = find_bc(dir)) return bc;
  }
  return std::nullopt;
}

std::vector<std::string> runtime_archs(const fs::path& root, std::string_view triple) {
  const std::string prefix = triple == manifest::kNvptxTriple    ? "libomptarget-nvptx-"
                             : triple == manifest::kAmdgcnTriple ? "libomptarget-amdgpu-"
                                                                 : "";
  std::vector<std::string> archs;
  if (prefix.empty() || !find_device_runtime(root, triple)) return archs;  // none usable (LLVM 16's AMD one)
  for (const auto& f : glob_dir(root / "lib", prefix, ".bc")) {
    const std::string name = f.filename().string();
    archs.push_back(name.substr(prefix.size(), name.size() - prefix.size() - 3));
  }
  return archs;
}

std::vector<fs::path> installed_llvms() {
  std::vector<std::pair<int, fs::path>> found;
  const ToolchainSearch search;
  for (int n = search.newest; n >= search.oldest; --n) {
    const fs::path root = search.system_prefix / fmt::format("llvm-{}", n);
    if (is_executable(root / "bin/clang")) found.emplace_back(n, root);
  }
  fs::path base;
  if (auto dir = config::env("OFFLOAD_BUILD_TOOLCHAINS")) base = *dir;
  else if (auto data = config::env("XDG_DATA_HOME")) base = fs::path(*data) / "offload-build";
  else if (auto home = config::env("HOME")) base = fs::path(*home) / ".local/share/offload-build";
  for (int n = search.newest; !base.empty() && n >= search.oldest; --n) {
    const fs::path root = base / fmt::format("llvm-{0}/usr/lib/llvm-{0}", n);
    if (is_executable(root / "bin/clang")) found.emplace_back(n, root);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<fs::path> roots;
  for (auto& [n, root] : found) roots.push_back(std::move(root));
  return roots;
}

int program_llvm_major(const std::string& program) {
  static std::mutex mutex;
  static std::map<std::string, int> memo;
  std::lock_guard lock(mutex);
  if (auto it = memo.find(program); it != memo.end()) return it->second;
  std::optional<fs::path> path;
  if (program.find('/') != std::string::npos) path = program;
  else if (const char* env = config::env_or_null("PATH")) path = find_in_path(program, env);
  int major = 0;
  std::error_code ec;
  if (path)
    if (const fs::path real = fs::canonical(*path, ec); !ec) major = llvm_major(real.parent_path().parent_path());
  if (major == 0) {  // clang-19, clang++-19.1
    const std::string name = fs::path(program).filename().string();
    const size_t dash = name.rfind('-');
    if (dash != std::string::npos) major = llvm_number(name.substr(dash + 1, name.find('.', dash) - dash - 1)).value_or(0);
  }
  if (major == 0) major = kDefaultLlvm;
  memo.emplace(program, major);
  return major;
}

namespace {

// ROCm's device libraries (ocml.bc ...), which LLVM 19's driver links into
// every AMD GPU compile unless told -nogpulib.
bool has_rocm_device_libs() {
  std::vector<fs::path> roots{"/opt/rocm"};
  if (auto env = config::env("ROCM_PATH")) roots.insert(roots.begin(), fs::path(*env));
  std::error_code ec;
  for (const auto& r : roots)
    if (fs::exists(r / "amdgcn/bitcode/ocml.bc", ec)) return true;
  return false;
}

// What a device pass needs to use `file`, the runtime of `target` in `tc`.
DeviceRuntime describe_runtime(const Toolchain& tc, const manifest::Target& target, fs::path file) {
  DeviceRuntime rt{std::move(file)};
  // Debian's clang looks in /usr/lib/llvm-N/lib, not next to itself.
  rt.bitcode_elsewhere = rt.file.extension() == ".bc" &&
                         rt.file.parent_path() != fs::path(fmt::format("/usr/lib/llvm-{}/lib", tc.major));
  rt.without_rocm_libs = target.family() == manifest::TargetFamily::Amdgcn && tc.major > 0 && tc.major < 20 &&
                         !has_rocm_device_libs();
  return rt;
}

}  // namespace

bool Toolchain::has_device_runtime(const manifest::Target& target) const {
  if (target.triple == manifest::kHostTriple) return true;
  return device_runtime(target).has_value();
}

std::optional<DeviceRuntime> Toolchain::device_runtime(const manifest::Target& target) const {
  if (target.triple == manifest::kHostTriple) return std::nullopt;
  // Asked for every GPU job of a plan (its argv and its output check), and
  // the search lists lib/ and lib/clang/: remembered per target by this
  // Toolchain and its copies.
  std::lock_guard lock(runtimes->mutex);
  const std::string name = target.triple + ":" + target.arch;
  auto it = runtimes->by_target.find(name);
  if (it == runtimes->by_target.end()) {
    std::optional<DeviceRuntime> found;
    if (auto file = find_device_runtime(root, target.triple, target.arch))
      found = describe_runtime(*this, target, std::move(*file));
    it = runtimes->by_target.emplace(name, std::move(found)).first;
  }
  return it->second;
}

std::string Toolchain::image_arch(const manifest::Target& target) const {
  if (target.triple == manifest::kHostTriple && major > 0 && major < 20) return "";
  return target.arch;
}

// The newest when several.
int llvm_major(const fs::path& root) {
  int best = 0;
  for (const auto& dir : glob_dir(root / "lib" / "clang", "", "")) {
    const std::string name = dir.filename().string();
    if (auto n = llvm_number(name.substr(0, name.find('.')))) best = std::max(best, *n);
  }
  return best;
}

Result<Toolchain> toolchain_at(const fs::path& given_root) {
  const fs::path root = normalize_root(given_root);
  const std::string v = package_version(root);
  if (!is_dir(root)) {
    return Error::usage(fmt::format(
        "LLVM toolchain directory {} does not exist; run scripts/setup.sh or install {}, or set "
        "$OFFLOAD_BUILD_LLVM to an LLVM {} installation (a manifest build also reads \"toolchain\" in "
        "offload.json; cargo mode reads no offload.json)",
        root.string(), kInstallAll, v));
  }
  Toolchain tc;
  tc.root = root;
  const fs::path bin = root / "bin";
  tc.clang = bin / "clang";
  tc.clangxx = bin / "clang++";
  // LLVM 20 renamed flang-new flang (LLVM 19 has only flang-new).
  tc.flang = bin / "flang";
  if (!is_executable(tc.flang) && is_executable(bin / "flang-new")) tc.flang = bin / "flang-new";
  tc.major = llvm_major(root);
  // LLVM 20 renamed clang-offload-packager (22 keeps the old name as an alias that warns).
  tc.offload_binary = bin / "llvm-offload-binary";
  if (!is_executable(tc.offload_binary) && is_executable(bin / "clang-offload-packager"))
    tc.offload_binary = bin / "clang-offload-packager";
  tc.linker_wrapper = bin / "clang-linker-wrapper";
  tc.objdump = bin / "llvm-objdump";
  tc.lib_dir = root / "lib";

  std::vector<std::string> missing, packages;
  const int named = tc.major ? tc.major : std::stoi(v);
  const std::pair<std::string_view, const fs::path*> required[] = {
      {"clang", &tc.clang},
      {"clang++", &tc.clangxx},
      {named < 20 ? "llvm-offload-binary (or clang-offload-packager)" : "llvm-offload-binary", &tc.offload_binary},
      {"clang-linker-wrapper", &tc.linker_wrapper}};
  for (const auto& [name, path] : required) {
    if (is_executable(*path)) continue;
    missing.emplace_back(name);
    std::string pkg = package_for(name, v);
    if (std::find(packages.begin(), packages.end(), pkg) == packages.end()) packages.push_back(pkg);
  }
  if (named < kOldestLlvm)  // e.g. clang-14 on PATH: no offload driver to model
    return Error::usage(fmt::format(
        "LLVM toolchain at {} is LLVM {}, older than LLVM {}, the oldest whose offload driver offload-build "
        "models; install {} (scripts/setup.sh does; scripts/setup.sh --llvm 19 unpacks LLVM 19, which has a GPU "
        "device runtime, into a private prefix) or set $OFFLOAD_BUILD_LLVM (a manifest build also reads "
        "\"toolchain\" in offload.json)",
        root.string(), named, kOldestLlvm, kInstallAll));
  if (!missing.empty()) {
    return Error::usage(fmt::format(
        "LLVM toolchain at {} is incomplete: {} not found in {}; install {} (scripts/setup.sh "
        "does) or set $OFFLOAD_BUILD_LLVM (a manifest build also reads \"toolchain\" in offload.json; cargo "
        "mode reads no offload.json)",
        root.string(), util::join(missing, ", "), bin.string(), util::join(packages, " ")));
  }
  const char* path_env = config::env_or_null("PATH");
  tc.cuda_path = find_cuda(kDefaultCudaRoot, path_env ? path_env : "");
  if (probe::is_executable(bin / "ld.lld")) tc.lld = bin / "ld.lld";
  return tc;
}

ToolchainSearch ToolchainSearch::from_environment(const std::optional<fs::path>& hint,
                                                  const std::optional<fs::path>& llvm) {
  ToolchainSearch s;
  s.hint = hint;
  s.env_root = llvm;
  if (auto path = config::env("PATH")) s.path_env = *path;
  return s;
}

std::optional<fs::path> toolchain_root_candidate(const ToolchainSearch& search) {
  if (search.hint) return normalize_root(*search.hint);
  if (search.env_root) return normalize_root(*search.env_root);
  for (int n = search.newest; n >= search.oldest; --n) {
    fs::path root = search.system_prefix / fmt::format("llvm-{}", n);
    if (is_dir(root / "bin")) return root;
  }
  return root_of_path_clang(search.path_env);
}

Result<Toolchain> find_toolchain_in(const ToolchainSearch& search) {
  if (search.hint) return toolchain_at(*search.hint);
  if (search.env_root) {
    auto tc = toolchain_at(*search.env_root);
    if (!tc) return Error::usage("$OFFLOAD_BUILD_LLVM: " + tc.error().message);
    return tc;
  }

  std::optional<Error> partial;  // the newest /usr/lib/llvm-N that lacks a tool
  for (int n = search.newest; n >= search.oldest; --n) {
    fs::path root = search.system_prefix / fmt::format("llvm-{}", n);
    if (!is_dir(root / "bin")) continue;
    auto tc = toolchain_at(root);
    if (tc) return tc;
    if (!partial) partial = tc.error();
  }
  std::string path_note = "clang on PATH: not found";
  if (auto root = root_of_path_clang(search.path_env)) {
    auto tc = toolchain_at(*root);
    if (tc) return tc;
    path_note = fmt::format("clang on PATH: {} is not a complete LLVM {}+ toolchain",
                            root->string(), search.oldest);
  }
  if (partial) return *partial;
  std::string range = search.newest == search.oldest
                          ? (search.system_prefix / fmt::format("llvm-{}", search.oldest)).string()
                          : fmt::format("{}/llvm-{{{}..{}}}", search.system_prefix.string(),
                                        search.newest, search.oldest);
  return Error::usage(fmt::format(
      "no LLVM {0}+ toolchain found (looked in {1}, {2}); run scripts/setup.sh or install "
      "clang-{3} clang-tools-{3} lld-{3} llvm-{3} libomp-{3}-dev liboffload-{3}, or set "
      "$OFFLOAD_BUILD_LLVM (a manifest build also reads \"toolchain\" in offload.json; cargo mode reads no "
      "offload.json)",
      search.oldest, range, path_note, kDefaultLlvm));
}

Result<Toolchain> find_toolchain(const std::optional<fs::path>& hint, const std::optional<fs::path>& llvm) {
  return find_toolchain_in(ToolchainSearch::from_environment(hint, llvm));
}

std::vector<fs::path> searched_dirs(const Toolchain& tc, const std::vector<manifest::Target>& targets,
                                    std::string_view path_env) {
  const fs::path lib = tc.root / "lib";
  std::vector<fs::path> dirs{ToolchainSearch{}.system_prefix, tc.root.parent_path(), tc.root, tc.root / "bin",
                             lib, lib / "clang"};
  for (const auto& clang_ver : glob_dir(lib / "clang", "", "")) dirs.push_back(clang_ver / "lib");
  for (const auto& t : targets) {
    if (!t.is_gpu()) continue;
    auto more = runtime_dirs(lib, t.triple);
    dirs.insert(dirs.end(), more.begin(), more.end());
  }
  const fs::path cuda(kDefaultCudaRoot);
  dirs.insert(dirs.end(), {cuda.parent_path(), cuda, cuda / "bin"});
  for (const auto& dir : util::split(path_env, ':'))
    if (!dir.empty() && fs::path(dir).is_absolute()) dirs.emplace_back(dir);
  return dirs;
}

}  // namespace ob::toolchain
