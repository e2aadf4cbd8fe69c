// --explain for a job that misses only because its checkout lies elsewhere
// (docs/CACHE.md, "--explain"): every stored job also leaves, in the local
// cache, a small "place" entry under its key with the places taken out
// (absolute paths outside the system directories made relative to the
// job's directory), recording where it ran and its paths. A later miss
// whose place-free key finds one from another directory would have hit
// but for its paths: --explain names the differing path and what to set.
// The programs are left out of that key too, so a miss for another compiler
// (another clang, or clang for clang++) is named as such.
//
//   place entry: {"cwd": DIR, "tools": [ID, ...], "argv": [ARG, ...], "inputs": [[PATH, NAME], ...]}, no files
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/cache/job_key.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cache {

struct PlaceRecord {
  std::string cwd;                 // where the job ran (absolute)
  std::vector<std::string> tools;  // JobKey::tools: the programs' identities
  std::vector<std::string> argv;   // JobKey::argv
  std::vector<std::pair<std::string, std::string>> inputs;  // each input's path and kernel-name identity
};

// The key of `key` (a direct key's fields) with its places and programs taken out.
std::string place_free_key(const plan::Plan& plan, const plan::Job& job, const JobKey& key);

std::string encode_place_meta(const PlaceRecord& record);
Result<PlaceRecord> decode_place_meta(const storage::Entry& entry);
PlaceRecord place_record(const plan::Plan& plan, const JobKey& key);

// What --explain says for a job whose earlier build at `earlier` had the same
// place-free key; nullopt when it ran in this very directory with the same
// programs.
std::optional<std::string> explain_place(const PlaceRecord& earlier, const PlaceRecord& now);

}  // namespace ob::cache
