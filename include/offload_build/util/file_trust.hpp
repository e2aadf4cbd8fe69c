// Who besides us may write a file or directory: the rules the cache applies to
// its directories and entries (storage/safe_dir.cpp) and the config stage to
// config files. Root and we are trusted; another user never is.
#pragma once

#include <sys/stat.h>

#include <string>

namespace ob::util {

// Whether `gid` is our effective group or one of our supplementary groups.
bool in_my_groups(gid_t gid);

// Why a file or directory of the cache with this stat is not to be trusted
// (another user could have written it); empty when it is. `shared`: a
// group-shared cache (OFFLOAD_BUILD_CACHE_UMASK), whose group's members are
// trusted.
std::string distrust(const struct stat& st, bool shared);

// Why a config file (or the directory holding it) with this stat is not to be
// trusted: writable by every user (a directory: unless sticky, as /tmp),
// owned by another user, or writable by a group we are not in. Empty when
// only we, root and our own groups can write it.
std::string distrust_config(const struct stat& st);

}  // namespace ob::util
