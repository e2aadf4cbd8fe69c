// Lookups that found nothing (docs/CACHE.md#lookups-that-found-nothing): the
// paths a compile looked for and did not find (an -I directory without the
// header, a __has_include that said no, a directory the driver probed),
// recorded by the preload library (OB_LOOKUPS_ENV in stable_names.h), kept
// in the job's dependency set beside the files it read, and checked on every
// hit, up-to-date check and no-op build: a file created where a compile once
// looked makes it run again. A depfile lists only what was read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/cache/file_facts.hpp"
#include "offload_build/cache/job_key.hpp"
#include "offload_build/plan/plan.hpp"

namespace ob::cache {

// Dep::sha256 of a path a lookup did not find: it must still not exist.
inline constexpr std::string_view kAbsent = "absent";
// Dep::sha256 prefix of a system directory (system_dirs()) that lookups
// found nothing in, followed by its mtime in nanoseconds: a file added to it
// (or removed) changes that. Dep::path is the directory.
inline constexpr std::string_view kDirectoryStamp = "directory mtime=";

// At most this many lookup dependencies per job (after the system
// directories are counted once each): more, and the job is not stored.
inline constexpr size_t kMaxLookupDeps = 10000;

// The dependency a job's record holds when its lookups are unknown (it was
// not stored): it never holds, so the job is never up to date, while
// --explain still compares the files it read.
Dep lookups_unknown();

bool is_absence(const Dep& dep);
bool is_directory_stamp(const Dep& dep);
bool is_lookups_unknown(const Dep& dep);

// `paths` (toolchain::read_lookups_record) as `job`'s dependencies: a path outside the system
// directories as itself (relative to the plan's directory when under a base
// directory, as make_dep writes reads), which must stay absent; one under
// them as the stamp of the nearest directory that exists (one per directory:
// a compile probes hundreds of system paths). Left out: the build directory
// (the plan's products and temporaries) and the kernel's /proc, /sys and /dev.
// nullopt, with `why`, when they cannot be kept: a path that exists now (it
// appeared while the job ran), a system directory modified within the last
// two seconds (a file added in the same timestamp tick would go unseen),
// more than kMaxLookupDeps.
std::optional<std::vector<Dep>> lookup_deps(const plan::Plan& plan, const plan::Job& job,
                                            const std::vector<std::filesystem::path>& system_dirs,
                                            const std::vector<std::string>& paths, std::string& why);

// Whether `dep` still describes the file system: a file's content
// (dep_matches), a path still absent, a directory unchanged.
bool dep_holds(const Dep& dep, FileFactsCache& files, const fs::path& cwd);
// The stat stamp the up-to-date check and the no-op record compare for
// `dep` now: a file's as hashed, a directory's, or none (exists = false) for
// an absent path.
Stamp dep_stamp(const Dep& dep, FileFactsCache& files, const fs::path& cwd);
// What changed about `dep` (--explain: "file appeared: a/h.h"); empty when nothing.
std::string dep_change(const Dep& dep, FileFactsCache& files, const fs::path& cwd);

}  // namespace ob::cache
