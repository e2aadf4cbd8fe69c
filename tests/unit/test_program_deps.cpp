// The programs a launcher compile's split ran (its compiler, its tools, the
// stable-names library), as its whole entry's dependencies: identified as
// programs are in every key (path, size and mtime), never read.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>

#include "offload_build/cache/depfile.hpp"
#include "offload_build/cache/lookups.hpp"
#include "support/temp_dir.hpp"

using namespace ob::cache;
using ob::test::TempDir;

TEST_CASE("a program dependency holds while its path, size and mtime do, without being read", "[cache]") {
  TempDir dir("ob-program-dep");
  const fs::path tmp = dir.path();
  const fs::path lib = tmp / "libob-stable-names.so";
  std::ofstream(lib) << "version 1";
  const std::string name = std::string(kProgramDepPrefix) + lib.string();
  FileFactsCache files({tmp / "project"});
  const FileFacts& first = files.get(name, tmp);
  REQUIRE(first.exists);
  const Dep dep{name, first.sha256, 0, 0, {}};
  // Relative to the working directory, as a compiler given as ./clang is.
  CHECK(FileFactsCache({tmp / "project"}).get(std::string(kProgramDepPrefix) + "./libob-stable-names.so", tmp).sha256 ==
        first.sha256);

  // Other bytes, the same size and mtime: the program its key says it is (tool_identity).
  const auto mtime = fs::last_write_time(lib);
  std::ofstream(lib, std::ios::trunc) << "version 2";
  fs::last_write_time(lib, mtime);
  FileFactsCache same({tmp / "project"});
  CHECK(dep_holds(dep, same, tmp));
  // Rebuilt (another mtime), or gone: it misses.
  fs::last_write_time(lib, mtime + std::chrono::seconds(5));
  FileFactsCache rebuilt({tmp / "project"});
  CHECK_FALSE(dep_holds(dep, rebuilt, tmp));
  fs::remove(lib);
  FileFactsCache gone({tmp / "project"});
  CHECK_FALSE(dep_holds(dep, gone, tmp));
}
