// Running the real offload-build binary (and other tools) from integration tests.
#pragma once

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "offload_build/process/subprocess.hpp"
#include "temp_dir.hpp"

namespace ob::test {

namespace fs = std::filesystem;

using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

inline process::Captured run_tool(std::vector<std::string> argv, const fs::path& cwd = {},
                               Env env = {}) {
  // Tests must not inherit a user's runtime settings.
  // Each test process gets its own cache unless the test names one.
  // Removed when the test process exits (a static TempDir).
  static const TempDir cache("ob-test-cache");
  const std::string cache_dir = cache.path().string();
  // Nor a user's or the machine's config files (a test that wants one names it).
  static const TempDir config_home("ob-test-config");
  env.insert(env.begin(), {{"OFFLOAD_BUILD_CONFIG", std::nullopt},
                           {"XDG_CONFIG_HOME", config_home.path().string()},
                           {"OFFLOAD_BUILD_SYSTEM_CONFIG", (config_home.path() / "none.conf").string()}});
  env.insert(env.begin(), {{"LIBOMPTARGET_INFO", std::nullopt},
                           {"OMP_TARGET_OFFLOAD", std::nullopt},
                           {"OMP_NUM_THREADS", std::nullopt},
                           {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
                           {"OFFLOAD_BUILD_REMOTE_EXECUTION", std::nullopt},
                           {"OFFLOAD_BUILD_SIGNING_KEY", std::nullopt},
                           {"OFFLOAD_BUILD_SIGNING_KEY_FILE", std::nullopt},
                           {"OFFLOAD_BUILD_CACHE_UMASK", std::nullopt},
                           {"OFFLOAD_BUILD_CACHE_DIR", cache_dir}});
  process::Command cmd{std::move(argv), cwd, std::move(env)};
  auto r = process::capture(cmd);
  if (!r) return process::Captured{127, "", r.error().message};
  return *r;
}

inline process::Captured run_ob(std::vector<std::string> args, const fs::path& cwd = {},
                             Env env = {}) {
  args.insert(args.begin(), OB_BINARY);
  return run_tool(std::move(args), cwd, std::move(env));
}

// `offload-build -C DIR [--cache-dir CACHE] OPTIONS... build`: the manifest
// build of the project in `dir` (no --cache-dir with an empty `cache`).
inline process::Captured build_project(const fs::path& dir, const fs::path& cache,
                                       std::vector<std::string> options = {}, Env env = {}) {
  std::vector<std::string> args{"-C", dir.string()};
  if (!cache.empty()) args.insert(args.end(), {"--cache-dir", cache.string()});
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("build");
  return run_ob(std::move(args), {}, std::move(env));
}

// The environment offload-build gives its C/C++ compiles for stable kernel
// names (LD_PRELOAD=... OFFLOAD_BUILD_STABLE_BASE=... OFFLOAD_BUILD_STABLE_ANCHOR=...
// OFFLOAD_BUILD_STABLE_SALT=...),
// read from the first such command in a --dry-run script: a reference clang
// run with it names kernels as offload-build's compiles do.
inline Env stable_names_env(const std::string& dry_run) {
  Env env;
  std::istringstream lines(dry_run);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("LD_PRELOAD=", 0) != 0) continue;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos || w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != eq) break;
      env.emplace_back(w.substr(0, eq), w.substr(eq + 1));
    }
    break;
  }
  return env;
}

// Copy an example into `dest` (without any build/ directory) and return its path.
inline fs::path copy_example(const std::string& name, const fs::path& dest) {
  fs::path from = fs::path(OB_EXAMPLES) / name;
  fs::path to = dest / name;
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator();
       ++it) {
    fs::path rel = it->path().lexically_relative(from);
    if (*rel.begin() == "build") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) fs::create_directories(to / rel);
    else fs::copy_file(it->path(), to / rel);
  }
  return to;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline size_t count_occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

// Files under `dir` whose name marks an uncommitted temporary output.
inline std::vector<fs::path> temp_outputs(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".ob-tmp-") != std::string::npos) out.push_back(e.path());
  return out;
}

inline const char* kLlvmBin = "/usr/lib/llvm-22/bin";

// A toolchain at `llvm` whose clang and clang++ are shell scripts (`script`
// gives each one's text from its name; the real one is kLlvmBin/NAME) and
// whose other tools are the real ones; the manifest in `project` is pointed
// at it ("toolchain"). For tests of compilers that misbehave.
template <class Script>
inline void use_wrapped_clang(const fs::path& project, const fs::path& llvm, Script script) {
  fs::create_directories(llvm / "bin");
  for (const char* tool : {"llvm-offload-binary", "clang-linker-wrapper", "llvm-objdump", "ld.lld"})
    fs::create_symlink(std::string(kLlvmBin) + "/" + tool, llvm / "bin" / tool);
  for (const std::string tool : {"clang", "clang++"}) {
    write_file(llvm / "bin" / tool, script(tool));
    fs::permissions(llvm / "bin" / tool, fs::perms::owner_all);
  }
  auto m = nlohmann::json::parse(read_file(project / "offload.json"));
  m["toolchain"] = llvm.string();
  write_file(project / "offload.json", m.dump());
}

}  // namespace ob::test
