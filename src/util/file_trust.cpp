#include "offload_build/util/file_trust.hpp"

#include <unistd.h>

#include <vector>

#include <fmt/format.h>

namespace ob::util {

namespace {

bool foreign_owner(const struct stat& st) { return st.st_uid != ::geteuid() && st.st_uid != 0; }

}  // namespace

bool in_my_groups(gid_t gid) {
  if (gid == ::getegid()) return true;
  int n = ::getgroups(0, nullptr);
  if (n <= 0) return false;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  n = ::getgroups(n, groups.data());
  for (int i = 0; i < n; ++i)
    if (groups[static_cast<size_t>(i)] == gid) return true;
  return false;
}

std::string distrust(const struct stat& st, bool shared) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (st.st_mode & S_IWOTH) return "is writable by every user";
  const bool foreign = foreign_owner(st);
  if (!shared) {
    if (foreign) return fmt::format("belongs to another user (uid {})", st.st_uid);
    if (st.st_mode & S_IWGRP)
      return "is writable by its group (to share a cache with a group, set "
             "OFFLOAD_BUILD_CACHE_UMASK; see docs/CACHE.md)";
    return {};
  }
  if ((foreign || (st.st_mode & S_IWGRP)) && !in_my_groups(st.st_gid))
    return fmt::format("belongs to uid {}, group {}, which is not one of ours", st.st_uid,
                       st.st_gid);
  return {};
}

std::string distrust_config(const struct stat& st) {
  const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
  if ((st.st_mode & S_IWOTH) && !sticky_dir) return "is writable by every user";
  if (foreign_owner(st)) return fmt::format("belongs to another user (uid {})", st.st_uid);
  if ((st.st_mode & S_IWGRP) && !sticky_dir && !in_my_groups(st.st_gid))
    return fmt::format("is writable by group {}, which is not one of ours", st.st_gid);
  return {};
}

}  // namespace ob::util
