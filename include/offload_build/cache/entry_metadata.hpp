// The metadata the job cache keeps in its entries, written and read back
// strictly: anything but exactly what the writer produces is a corrupt entry
// (counted, removed, rebuilt), never an internal error.
//
//   result entry:   {"job": ID, "modes": [MODE, ...], "diagnostics": true?, "jobs": N?}
//                   files: one per output, then the kept depfile (optional),
//                   then "diagnostics" when the flag is set
//   manifest entry: {"candidates": [{"deps": [[PATH, SHA256, DEV, INODE, NAME], ...],
//                                    "result": KEY}, ...]}, no files
//
// Strings are written losslessly (util/json_text.hpp), so any file name works.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "offload_build/cache/job_key.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cache {

struct ResultMeta {
  std::string job;
  std::vector<unsigned> modes;  // permission bits of each output when stored
  bool diagnostics = false;
  bool kept_depfile = false;    // derived: one file more than outputs + diagnostics
  // The jobs the entry stands for (a launcher compile's whole entry: every
  // job of its split), counted as that many hits; 1 when absent.
  size_t jobs = 1;
};
std::string encode_result_meta(const ResultMeta& meta);
Result<ResultMeta> decode_result_meta(const storage::Entry& entry);

struct Candidate {
  std::vector<Dep> deps;
  std::string result;
};
std::string encode_manifest_meta(const std::vector<Candidate>& candidates);
Result<std::vector<Candidate>> decode_manifest_meta(const storage::Entry& entry);

// What is wrong with an entry of `kind` ("result", "manifest"); empty when
// nothing (`cache verify`).
std::string entry_problem(std::string_view kind, const storage::Entry& entry);

// The mode a restored output gets: what a fresh build gives (0666 less the
// umask), plus the executable bits (less the umask) when the stored mode had
// any. Never setuid, setgid, sticky, or write for others beyond the umask.
unsigned restored_mode(unsigned stored_mode, unsigned umask);
// This process's umask, read without changing it.
unsigned process_umask();

}  // namespace ob::cache
