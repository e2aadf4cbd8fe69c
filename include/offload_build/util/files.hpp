// Whole-file reads and writes shared by the stages: a file read in one piece,
// and a file replaced atomically (a temporary next to it, then one rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "offload_build/util/result.hpp"

namespace ob::util {

// The largest file read_file() reads by default: above it, nullopt.
inline constexpr uint64_t kMaxWholeFile = uint64_t{64} << 20;  // 64 MiB
// The largest build product (an object, a device image, a package our tools
// wrote) read whole: the cache's largest payload too.
inline constexpr uint64_t kMaxBuildOutput = uint64_t{2} << 30;  // 2 GiB

// Every whole-file read goes through here (docs/RELIABILITY.md, "Hostile
// inputs: local files"): the bytes of `path` when it is a regular file (a
// symlink to one is followed) of at most `max` bytes. It is opened with
// O_NONBLOCK (a FIFO cannot block the open), checked with fstat on the open
// descriptor, and at most max + 1 bytes are read (a file growing while read,
// or a /proc file reporting size 0, is refused too): /dev/zero, a FIFO or a
// huge file cost neither time nor memory. The error (exit code 2) names the
// file and what is wrong, `what` ("a manifest", "a response file") saying what
// the file had to be:
//   "cannot read F: No such file or directory"
//   "F: not a regular file (a character device); a manifest must be a regular file"
//   "F is 40.0 MiB; a manifest is at most 16 MiB"
// `open_errno`, when given, gets the errno of a failed open (ENOENT: missing),
// 0 otherwise, for callers to whom a missing file is no error.
Result<std::string> read_regular_file(const std::filesystem::path& path, uint64_t max,
                                      std::string_view what, int* open_errno = nullptr);

// The same, quietly: nullopt when the file cannot be read, is not a regular
// file or is larger than `max`.
std::optional<std::string> read_file(const std::filesystem::path& path,
                                     uint64_t max = kMaxWholeFile);

// "512 B", "12.3 MiB" (binary units, one decimal).
std::string format_bytes(uint64_t bytes);

// Write `data` to `target` through ".NAME.ob-tmp-PID-wN" in the same directory
// (the name the executor's sweep of dead processes' temporaries knows) and one
// rename: a reader sees the old file or the new one, never half of one; on
// failure nothing is left behind. The error says why (not which file: the
// caller names it).
Result<void> write_file_atomic(const std::filesystem::path& target, std::string_view data);

}  // namespace ob::util
