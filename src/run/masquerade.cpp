// Masquerade mode (masquerade.hpp): offload-build started through a symlink
// named after a compiler, and the command that makes such a directory.
#include "offload_build/run/masquerade.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <set>

#include <fmt/core.h>

#include "offload_build/config/config.hpp"
#include "offload_build/run/launcher.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

namespace {

constexpr const char* kSelf = "offload-build";
// The drivers a default masquerade directory stands in for (each also with a
// version suffix: clang++-22, gcc-12).
constexpr std::string_view kDrivers[] = {"clang", "clang++", "flang", "flang-new", "cc", "c++", "gcc", "g++"};
// Entries read of one PATH directory at most (a directory of a million files
// costs a bounded scan).
constexpr size_t kMaxEntries = 100000;

fs::path self_exe() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && fs::equivalent(a, b, ec) && !ec;
}

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

// kDrivers' name, with any version suffix: clang++-22, gcc-12.2.
bool default_driver(std::string name) {
  if (const size_t dash = name.rfind('-'); dash != std::string::npos && dash + 1 < name.size() &&
                                            name.find_first_not_of("0123456789.", dash + 1) == std::string::npos)
    name.resize(dash);
  return std::find(std::begin(kDrivers), std::end(kDrivers), name) != std::end(kDrivers);
}

// The default drivers on PATH outside `dir`, each name once.
std::vector<std::string> drivers_on_path(const fs::path& dir, const fs::path& self) {
  std::set<std::string> names;
  const char* path = config::env_or_null("PATH");
  for (const auto& d : util::split(path ? path : "", ':')) {
    std::error_code ec;
    if (d.empty() || same_file(d, dir)) continue;
    size_t seen = 0;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end && seen < kMaxEntries; it.increment(ec), ++seen) {
      const std::string name = it->path().filename().string();
      if (default_driver(name) && is_executable(it->path()) && !same_file(it->path(), self)) names.insert(name);
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace

std::optional<std::string> masquerade_name(const char* argv0) {
  if (!argv0) return std::nullopt;
  const std::string name = fs::path(argv0).filename().string();
  if (name.empty() || util::starts_with(name, kSelf) || !looks_like_compiler(name)) return std::nullopt;
  return name;
}

std::optional<fs::path> masqueraded_compiler(const std::string& name, const std::string& path_env,
                                             const fs::path& self) {
  for (const auto& d : util::split(path_env, ':')) {
    if (d.empty()) continue;
    const fs::path candidate = fs::path(d) / name;
    if (is_executable(candidate) && !same_file(candidate, self)) return candidate;
  }
  return std::nullopt;
}

int masquerade(const std::string& name, const std::vector<std::string>& args) {
  const char* path = config::env_or_null("PATH");
  const auto real = masqueraded_compiler(name, path ? path : "", self_exe());
  if (!real) {
    std::cerr << fmt::format(
        "offload-build: error: started as {} (a masquerade symlink), but no other {} is on PATH; put the "
        "masquerade directory before the compiler's own directory on PATH, not instead of it\n",
        name, name);
    return 127;  // as a shell says of a command it cannot find
  }
  std::vector<std::string> command{real->string()};
  command.insert(command.end(), args.begin(), args.end());
  Request global;
  global.command_line = command;
  return launch(command, global);
}

Result<int> make_masquerade_dir(const fs::path& given, const std::vector<std::string>& names, std::ostream& out) {
  const fs::path self = self_exe();
  if (self.empty()) return Error::failure("masquerade: cannot tell where offload-build itself is (/proc/self/exe)");
  const fs::path dir = fs::absolute(given).lexically_normal();
  std::vector<std::string> wanted = names.empty() ? drivers_on_path(dir, self) : names;
  if (wanted.empty())
    return Error::usage("masquerade: no clang, flang, gcc or cc found on PATH; name the compilers: "
                        "offload-build masquerade DIR clang clang++");
  // Every name checked before anything is written.
  for (const auto& n : wanted) {
    if (n.empty() || n.find('/') != std::string::npos || !looks_like_compiler(n) || util::starts_with(n, kSelf))
      return Error::usage(fmt::format(
          "masquerade: '{}' is not a compiler name (clang, clang++-22, flang-new, gcc, cc...)", n));
    std::error_code ec;
    const auto st = fs::symlink_status(dir / n, ec);
    if (!ec && fs::exists(st) && !fs::is_symlink(st))
      return Error::usage(fmt::format("masquerade: {} exists and is not a symlink; remove it or choose another "
                                      "directory", (dir / n).string()));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error::failure(fmt::format("masquerade: cannot create {}: {}", dir.string(), ec.message()));
  for (const auto& n : wanted) {
    const fs::path link = dir / n, temp = dir / ("." + n + ".offload-build-tmp");
    fs::remove(temp, ec);
    fs::create_symlink(self, temp, ec);
    if (!ec) fs::rename(temp, link, ec);  // a symlink there before is replaced at once
    if (ec) return Error::failure(fmt::format("masquerade: cannot write {}: {}", link.string(), ec.message()));
    out << fmt::format("{} -> {}\n", link.string(), self.string());
  }
  out << fmt::format("Put {} first on PATH: PATH={}:$PATH make (or cmake, ninja); each of these names then runs "
                     "offload-build, which runs the next one on PATH\n",
                     dir.string(), dir.string());
  return 0;
}

}  // namespace ob::run
