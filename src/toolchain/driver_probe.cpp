#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/program_identity.hpp"
#include "offload_build/config/config.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/toolchain/probe.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/util/json_text.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain {

namespace {

// What the driver reads besides its argv when it lays out a compile.
constexpr const char* kEnvironment[] = {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
                                        "COMPILER_PATH", "CCC_OVERRIDE_OPTIONS",
                                        "GCC_EXEC_PREFIX", "CUDA_PATH", "PATH"};

constexpr int kTimeoutMs = 20'000;

// The working directory in a remembered listing: the driver names it only
// in -fdebug-compilation-dir= and -fcoverage-compilation-dir= (and in paths
// the caller gave absolute), so a memo made in one checkout serves another.
constexpr std::string_view kCwd = "<cwd>";

// `from` replaced by `to` where it is a whole path or a path's leading part:
// the whole argument, its start, or after '='.
driver_listing::Argv replace_dir(driver_listing::Argv argv, const std::string& from,
                                 std::string_view to) {
  auto ends_path = [&](const std::string& a, size_t end) { return end == a.size() || a[end] == '/'; };
  for (auto& a : argv) {
    if (a.compare(0, from.size(), from) == 0 && ends_path(a, from.size())) {
      a = std::string(to) + a.substr(from.size());
      continue;
    }
    const size_t eq = a.find('=');
    if (eq != std::string::npos && a.compare(eq + 1, from.size(), from) == 0 &&
        ends_path(a, eq + 1 + from.size()))
      a = a.substr(0, eq + 1) + std::string(to) + a.substr(eq + 1 + from.size());
  }
  return argv;
}

class ClangListingProbe final : public DriverProbe {
 public:
  ClangListingProbe(std::optional<fs::path> memo_dir, std::vector<fs::path> tools)
      : memo_dir_(std::move(memo_dir)), tools_(std::move(tools)) {}

  Result<std::vector<driver_listing::Argv>> list(const driver_listing::Argv& argv,
                                                 const fs::path& cwd) override {
    const std::string key = identity(argv);
    if (auto memo = recall(key)) {
      for (auto& c : *memo) c = replace_dir(std::move(c), std::string(kCwd), cwd.string());
      return std::move(*memo);
    }
    auto commands = run(argv, cwd);
    if (commands) remember(key, abstract_dir(*commands, cwd));
    return commands;
  }

  Result<std::vector<driver_listing::Argv>> list_named(const driver_listing::Argv& argv, const fs::path& cwd,
                                                       const std::vector<std::string>& names) override {
    auto shape = unnamed(std::vector<driver_listing::Argv>(1, argv), names);
    if (!shape) return list(argv, cwd);
    const std::string key = identity(shape->front()) + fs::path(names.front()).extension().string();
    if (auto memo = recall(key)) {
      for (auto& c : *memo) c = replace_dir(std::move(c), std::string(kCwd), cwd.string());
      return named(std::move(*memo), names);
    }
    auto commands = run(argv, cwd);
    if (!commands) return commands;
    if (auto generic = unnamed(*commands, names)) remember(key, abstract_dir(*generic, cwd));
    return commands;
  }

 private:
  // The commands with each of `names` as a whole argument replaced by
  // "<@nameK>" (and the source's -main-file-name by "<@main>"); nullopt when
  // a name is in an argument otherwise.
  static std::optional<std::vector<driver_listing::Argv>> unnamed(std::vector<driver_listing::Argv> commands,
                                                                  const std::vector<std::string>& names) {
    const std::string main = fs::path(names.front()).filename().string();
    for (auto& c : commands)
      for (size_t i = 0; i < c.size(); ++i) {
        std::string& a = c[i];
        bool whole = false;
        for (size_t k = 0; k < names.size() && !whole; ++k)
          if (!names[k].empty() && a == names[k]) a = fmt::format("<@name{}>", k), whole = true;
        if (whole) continue;
        if (i > 0 && c[i - 1] == "-main-file-name" && a == main) {
          a = "<@main>";
          continue;
        }
        if (!main.empty() && a.find(main) != std::string::npos) return std::nullopt;
        for (const auto& n : names)
          if (!n.empty() && a.find(n) != std::string::npos) return std::nullopt;
      }
    return commands;
  }
  static std::vector<driver_listing::Argv> named(std::vector<driver_listing::Argv> commands,
                                                 const std::vector<std::string>& names) {
    for (auto& c : commands)
      for (auto& a : c) {
        if (a == "<@main>") a = fs::path(names.front()).filename().string();
        for (size_t k = 0; k < names.size(); ++k)
          if (a == fmt::format("<@name{}>", k)) a = names[k];
      }
    return commands;
  }
  static std::vector<driver_listing::Argv> abstract_dir(const std::vector<driver_listing::Argv>& commands,
                                                        const fs::path& cwd) {
    std::vector<driver_listing::Argv> out;
    for (const auto& c : commands) out.push_back(replace_dir(c, cwd.string(), kCwd));
    return out;
  }

  Result<std::vector<driver_listing::Argv>> run(const driver_listing::Argv& argv, const fs::path& cwd) const {
    driver_listing::Argv cmd = argv;
    cmd.push_back("-###");
    // clang answers in ~40 ms; a wrapper that hangs must not hang the build.
    auto r = process::capture(process::Command{cmd, cwd, {}}, kTimeoutMs);
    if (!r) return r.error();
    if (r->exit_code != 0)
      return Error::failure(fmt::format("{} -### failed: {}", argv.front(), r->err));
    return driver_listing::parse(r->err);  // the driver lists on stderr
  }

  std::string identity(const driver_listing::Argv& argv) const {
    nlohmann::json j{{"driver", program_identity(argv.front())}, {"argv", argv}, {"cwd", kCwd}};
    for (const char* name : kEnvironment) {
      const char* v = config::env_or_null(name);
      j["env"][name] = v ? v : "";
    }
    for (const auto& t : tools_) j["tools"].push_back(util::file_identity(t));
    return util::dump_lossless(j);
  }

  std::optional<std::vector<driver_listing::Argv>> recall(const std::string& key) const {
    auto answer = probe::recall(memo_dir_, "clang-listing", key);
    if (!answer) return std::nullopt;
    try {
      return answer->get<std::vector<driver_listing::Argv>>();
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  }

  void remember(const std::string& key, const std::vector<driver_listing::Argv>& commands) const {
    probe::remember(memo_dir_, "clang-listing", key, commands);
  }

  std::optional<fs::path> memo_dir_;
  std::vector<fs::path> tools_;
};

}  // namespace

std::vector<Result<std::vector<driver_listing::Argv>>> list_all(
    DriverProbe& probe, const std::vector<driver_listing::Argv>& commands, const fs::path& cwd,
    size_t parallel, const std::function<void()>& started, const std::vector<std::vector<std::string>>& names) {
  std::vector<std::optional<Result<std::vector<driver_listing::Argv>>>> slots(commands.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next++) < commands.size();) {
      // An exception must not escape a thread (std::terminate): it becomes this command's error.
      try {
        slots[k] = k < names.size() && !names[k].empty() ? probe.list_named(commands[k], cwd, names[k])
                                                         : probe.list(commands[k], cwd);
      } catch (const std::exception& e) {
        slots[k] = Error::failure(std::string("internal error while asking the driver: ") + e.what());
      }
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < std::min(parallel, commands.size()); ++t) workers.emplace_back(work);
  if (started) started();
  work();
  for (auto& w : workers) w.join();
  std::vector<Result<std::vector<driver_listing::Argv>>> out;
  for (auto& s : slots) out.push_back(std::move(*s));
  return out;
}

std::optional<std::vector<std::string>> system_gpu_archs(const Toolchain& tc,
                                                        std::optional<fs::path> memo_dir) {
  const fs::path tool = tc.root / "bin/offload-arch";
  // The GPUs change with the machine, or at most across a reboot.
  std::string boot, host(256, '\0');
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  if (gethostname(host.data(), host.size()) != 0) host.clear();
  host.resize(std::strlen(host.c_str()));
  const std::string key =
      nlohmann::json{{"tool", util::file_identity(tool)}, {"boot", boot}, {"host", host}}.dump();
  if (auto answer = probe::recall(memo_dir, "gpu-archs", key); answer && answer->is_array()) {
    std::vector<std::string> archs;
    for (const auto& a : *answer)
      if (a.is_string()) archs.push_back(a.get<std::string>());
    return archs;
  }
  auto r = process::capture(process::Command{{tool.string()}, {}, {}}, kTimeoutMs);
  if (!r || r->exit_code != 0) return std::nullopt;
  std::vector<std::string> archs;
  for (const auto& line : util::split(r->out, '\n'))
    if (auto arch = util::trim(line); !arch.empty()) archs.emplace_back(arch);
  probe::remember(memo_dir, "gpu-archs", key, archs);
  return archs;
}

std::unique_ptr<DriverProbe> make_driver_probe(const Toolchain& tc, std::optional<fs::path> memo_dir) {
  std::vector<fs::path> tools;
  if (tc.cuda_path) tools.push_back(*tc.cuda_path / "bin/ptxas");
  return std::make_unique<ClangListingProbe>(std::move(memo_dir), std::move(tools));
}

}  // namespace ob::toolchain
