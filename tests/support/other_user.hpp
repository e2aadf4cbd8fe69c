// What a test gives the other user it runs something as (`setpriv --reuid`,
// a daemon that drops privileges): the checkout may lie in a directory only
// we can enter (a clone under /root, mode 0700), so nobody must never be
// asked to run or read anything there. `OtherUser` copies the offload-build
// under test and the stable-names library beside it into the test's own
// temporary directory (mode 0755), and checks that the user can reach that
// directory; a test that cannot give it that skips, naming the directory.
//
// OB_TEST_BINARY names the offload-build to copy instead of the build tree's
// (tests/scripts/private_checkout_test.sh: a copy under a 0700 directory).
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "support/ob_process.hpp"

namespace ob::test {

// The offload-build under test.
inline std::string ob_under_test() {
  const char* e = std::getenv("OB_TEST_BINARY");
  return e && *e ? e : OB_BINARY;
}

// The first directory from `path` up that a user who is neither its owner
// nor in its group cannot enter (no o+x), or nullopt.
inline std::optional<fs::path> unreachable_for_others(const fs::path& path) {
  for (fs::path p = fs::absolute(path); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH)) return p;
    if (p == p.root_path()) break;
  }
  return std::nullopt;
}

struct OtherUser {
  fs::path bin;     // <tmp>/other-user-bin, 0755
  fs::path binary;  // bin/offload-build (with libob-stable-names.so beside it)
  std::string skip; // non-empty: why this test cannot give the user what it needs

  explicit OtherUser(const fs::path& tmp) : bin(tmp / "other-user-bin"), binary(bin / "offload-build") {
    if (auto dir = unreachable_for_others(tmp)) {
      skip = "another user cannot reach the test's temporary directory: " + dir->string() +
             " is not searchable by others (set TMPDIR to a directory they can enter)";
      return;
    }
    const fs::path built = ob_under_test();
    fs::create_directories(bin);
    fs::copy_file(built, binary, fs::copy_options::overwrite_existing);
    const fs::path library = built.parent_path() / "libob-stable-names.so";
    if (fs::exists(library))
      fs::copy_file(library, bin / library.filename(), fs::copy_options::overwrite_existing);
    for (const auto& p : {tmp, bin}) fs::permissions(p, fs::perms(0755));
    fs::permissions(binary, fs::perms(0755));
  }
};

}  // namespace ob::test
