// Identity of a program or file without reading it: resolved path, size and
// modification time (ccache's "mtime" compiler check). A different binary at
// the same path differs; package managers keep file mtimes, so identical
// installations on two machines agree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ob::util {

std::string file_identity(const std::filesystem::path& path);

// A file's or directory's state without reading it, not through a symlink:
// "absent", or kind:size:mtime:ctime:inode (nanoseconds). Equal stamps mean
// unchanged, as far as stat can tell (an in-place edit with the mtime put
// back changes the ctime); for a memo of what was derived from the file.
struct FileStamp {
  std::string text;
  int64_t mtime_ns = 0;
};
FileStamp file_stamp(const std::filesystem::path& path);

// The wall clock (the one file mtimes are on), in nanoseconds.
int64_t wall_clock_ns();
// Git's racy-file rule: a file modified within the second before a question
// was asked at `asked_ns` may have changed in the same tick as it was read,
// so its stamp cannot vouch for what was read: nothing derived is remembered.
inline bool racy(int64_t mtime_ns, int64_t asked_ns) { return mtime_ns >= asked_ns - 1000000000; }

}  // namespace ob::util
