#include "offload_build/cache/lookups.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <fmt/core.h>

#include "offload_build/cache/depfile.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/toolchain/stable_names.h"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::cache {

namespace {

// A directory modified this recently may be modified again within the same
// timestamp tick without its mtime changing (git's "racily clean").
constexpr auto kRacy = std::chrono::seconds(2);

std::string directory_stamp(const Stamp& s) { return fmt::format("{}{}", kDirectoryStamp, s.mtime_ns); }

bool is_directory(const fs::path& p, Stamp& stamp) {
  struct stat st {};
  if (stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  stamp = any_stamp(p);  // the same fields as every other stamp
  return stamp.exists;
}

}  // namespace

Dep lookups_unknown() { return Dep{"<lookups unknown>", "unknown", 0, 0, {}}; }
bool is_lookups_unknown(const Dep& dep) { return dep.sha256 == "unknown" && dep.path == "<lookups unknown>"; }
bool is_absence(const Dep& dep) { return dep.sha256 == kAbsent; }
bool is_directory_stamp(const Dep& dep) { return util::starts_with(dep.sha256, kDirectoryStamp); }

std::optional<std::vector<Dep>> lookup_deps(const plan::Plan& plan, const plan::Job& job,
                                            const std::vector<fs::path>& system_dirs,
                                            const std::vector<std::string>& paths, std::string& why) {
  static const fs::path kernel_dirs[] = {"/proc", "/sys", "/dev"};
  std::vector<fs::path> project{plan.cwd, plan.build_dir};
  project.insert(project.end(), plan.base_dirs.begin(), plan.base_dirs.end());
  std::set<fs::path> absent;
  std::map<fs::path, Stamp> dirs;  // system directories, stamped before their paths are checked
  std::vector<fs::path> system_paths;
  // The job's own outputs under their temporary names (and the compiler's
  // temporaries beside them, "NAME-abc123.tmp"), which it looked for before
  // it wrote them: never an input.
  std::vector<std::string> temps;
  for (const auto& out : job.outputs) temps.push_back(exec::temporary_path(out, job.id).string());
  auto own_temp = [&temps](const fs::path& p) {
    return std::any_of(temps.begin(), temps.end(), [&](const std::string& t) { return util::starts_with(p.string(), t); });
  };
  for (const auto& p : paths) {
    const fs::path full = fs::path(p).lexically_normal();
    if (util::is_under(full, plan.build_dir) || own_temp(full)) continue;
    bool kernel = false;
    for (const auto& k : kernel_dirs) kernel |= util::is_under(full, k);
    if (kernel) continue;
    if (!is_system_file(full, project, system_dirs)) {
      absent.insert(full);
      continue;
    }
    fs::path dir = full.parent_path();
    Stamp stamp;
    while (!dir.empty() && dir != dir.parent_path() && !dirs.count(dir) && !is_directory(dir, stamp))
      dir = dir.parent_path();
    if (!dirs.count(dir) && !is_directory(dir, stamp)) continue;  // "/" missing: nothing to stamp
    dirs.try_emplace(dir, stamp);
    system_paths.push_back(full);
  }
  // A path under one that is absent is absent too.
  for (auto it = absent.begin(); it != absent.end();) {
    bool covered = false;
    for (fs::path up = it->parent_path(); !covered && up != up.parent_path(); up = up.parent_path())
      covered = absent.count(up) > 0;
    it = covered ? absent.erase(it) : std::next(it);
  }
  if (absent.size() + dirs.size() > kMaxLookupDeps) {
    why = fmt::format("more than {} lookups that found nothing", kMaxLookupDeps);
    return std::nullopt;
  }
  // Still absent now (a stat each, after the directories' stamps): one that
  // appeared while the job ran may or may not have been seen by it.
  auto appeared = [&why](const auto& list) {
    for (const fs::path& p : list)
      if (any_stamp(p).exists) {
        why = "a file appeared while the job ran: " + p.string();
        return true;
      }
    return false;
  };
  if (appeared(system_paths) || appeared(absent)) return std::nullopt;
  const int64_t racy_from =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          (std::chrono::system_clock::now() - kRacy).time_since_epoch())
          .count();
  std::vector<Dep> deps;
  for (const auto& [dir, stamp] : dirs) {
    if (stamp.mtime_ns >= racy_from) {
      why = "a system directory looked into was modified moments ago: " + dir.string();
      return std::nullopt;
    }
    deps.push_back(Dep{dir.string(), directory_stamp(stamp), 0, 0, {}});
  }
  FileFacts none;
  none.sha256 = std::string(kAbsent);
  for (const auto& p : absent) {
    Dep d = make_dep(plan, job, p.string(), none);
    deps.push_back(Dep{d.path, d.sha256, 0, 0, {}});
  }
  return deps;
}

bool dep_holds(const Dep& dep, FileFactsCache& files, const fs::path& cwd) {
  if (is_lookups_unknown(dep)) return false;
  if (is_absence(dep)) return !files.any(dep.path, cwd).exists;
  if (is_directory_stamp(dep)) {
    const Stamp& now = files.any(dep.path, cwd);
    return now.exists && directory_stamp(now) == dep.sha256;
  }
  return dep_matches(dep, files.get(dep.path, cwd));
}

Stamp dep_stamp(const Dep& dep, FileFactsCache& files, const fs::path& cwd) {
  if (is_absence(dep) || is_lookups_unknown(dep)) return Stamp{};
  if (is_directory_stamp(dep)) return files.any(dep.path, cwd);
  return files.get(dep.path, cwd).stamp;
}

std::string dep_change(const Dep& dep, FileFactsCache& files, const fs::path& cwd) {
  if (is_lookups_unknown(dep)) return "";  // said when it ran ("not stored: ...")
  if (is_absence(dep))
    return files.any(dep.path, cwd).exists
               ? "file appeared: " + dep.path + " (looked for and not found when it last ran)"
               : "";
  if (is_directory_stamp(dep))
    return dep_holds(dep, files, cwd)
               ? ""
               : "directory changed: " + dep.path + " (a lookup found nothing in it when it last ran)";
  const FileFacts& now = files.get(dep.path, cwd);
  if (util::starts_with(dep.path, kEnvDepPrefix))
    return now.sha256 == dep.sha256 ? "" : "environment variable changed: " + dep.path.substr(kEnvDepPrefix.size());
  if (!now.exists) return "file removed: " + dep.path;
  if (now.sha256 != dep.sha256) return "file changed: " + dep.path;
  if (!dep.name.empty() && now.name != dep.name) return "file moved: " + dep.path;
  if (dep.inode != 0 &&
      (static_cast<uint64_t>(now.inode) != dep.inode || static_cast<uint64_t>(now.device) != dep.device))
    return "file replaced by a copy (new inode, so new kernel names): " + dep.path;
  return "";
}

}  // namespace ob::cache
