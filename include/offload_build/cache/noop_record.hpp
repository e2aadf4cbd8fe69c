// A whole build's no-op record (make's and ninja's idea: a build with nothing
// to do only stats files). Written after a build in which every job ended
// current (ran, served from the cache or up to date) and recorded in the build
// state; read at the start of the next plain build, which, when the record
// still holds, prints what a no-op build prints without planning or reading
// state.json. It holds:
// - a fingerprint of everything else that decides the plan (the caller's:
//   the binary, the command line, the directory, every setting's value);
// - each environment variable the build read (config::env_names_read) and
//   its value (a secret's: only whether it is set);
// - the stat stamp of every file the plan read or wrote: each job's inputs
//   and depfile entries and its outputs (the stamps the build state holds,
//   so exactly what each job's up-to-date check would compare), the tools,
//   the manifest, the directories the source globs and the toolchain search
//   looked into;
// - each job's description, in the order a no-op build reports them.
// Anything unexpected in it (another version, truncated, unreadable) means no
// record, never an error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "offload_build/cache/build_state.hpp"
#include "offload_build/cache/file_facts.hpp"
#include "offload_build/plan/plan.hpp"

namespace ob::cache {

struct NoopVariable {
  std::string name;
  std::optional<std::string> value;  // nullopt: unset
  // A secret (util::hidden_from_children): only whether it is set is kept,
  // never its value (a secret decides no plan).
  bool secret = false;
};

struct NoopRecord {
  std::string fingerprint;
  std::string program;                // what the build returns: the linked program
  std::vector<std::string> jobs;      // descriptions, in the order they are reported
  std::vector<NoopVariable> env;      // every variable the build read
  std::vector<std::pair<std::string, Stamp>> files;  // absolute path, stamp (any kind of file)
};

// build_dir/.offload-build/noop
fs::path noop_record_file(const fs::path& build_dir);

std::string encode_noop_record(const NoopRecord& record);
std::optional<NoopRecord> decode_noop_record(std::string_view text);

// At most a few MiB (read_file's cap), else nullopt.
std::optional<NoopRecord> read_noop_record(const fs::path& file);
// Written atomically; a failure leaves no record (a later build is only slower).
void write_noop_record(const fs::path& file, const NoopRecord& record);
// Before a build runs its plan: an interrupted or failed build leaves none.
void forget_noop_record(const fs::path& file);

// Whether nothing the record names changed: each file's stamp, each variable.
bool noop_record_holds(const NoopRecord& record);

// The record of a build that just succeeded: `state`'s stamps for every job
// of `plan` (BuildState::current_stamps) and `more_files` stamped now. nullopt
// when a job would not be up to date next time, or when a file that is not a
// product of the plan was modified at or after `racy_from_ns` (wall-clock
// nanoseconds: the build's start less the file system's timestamp
// granularity): a change made after its stat in the same timestamp tick
// would go unseen, as git's "racily clean" files (the next build, a slow
// no-op, writes the record).
std::optional<NoopRecord> make_noop_record(const BuildState& state, const plan::Plan& plan,
                                           const std::vector<fs::path>& more_files,
                                           std::string fingerprint, int64_t racy_from_ns);

}  // namespace ob::cache
