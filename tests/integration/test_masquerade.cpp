// Masquerade mode (docs/LAUNCHER.md "Masquerade"): a directory of symlinks
// named after compilers, first on PATH, makes a one-word $(CC) run
// offload-build, which launches the real compiler; `which $(CC)` works (#54).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "integration/launcher_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kSource = kWorkKernel;

int counter(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

std::string path_with(const fs::path& first) { return first.string() + ":" + std::getenv("PATH"); }

}  // namespace

TEST_CASE("masquerade: make with a one-word CC through the symlink directory splits and caches, which finds it",
          "[launcher][integration][masquerade]") {
  Launcher l;
  const fs::path masq = l.tmp / "masq";
  auto made = l.ob({"masquerade", masq.string(), "clang-22", "clang++-22"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  for (const char* name : {"clang-22", "clang++-22"}) {
    REQUIRE(fs::is_symlink(masq / name));
    CHECK(fs::equivalent(masq / name, OB_BINARY));
  }
  write_file(l.tmp / "k.c", kSource);
  write_file(l.tmp / "Makefile",
             "k.o: k.c\n\t$(CC) -fopenmp " + kHostTargets + " -O2 -c k.c -o k.o\n"
             "which:\n\twhich $(CC) > which.txt\n");
  const Env path{{"PATH", path_with(masq)}};
  auto cold = l.cc({"make", "-s", "CC=clang-22", "k.o", "which"}, path);
  INFO(cold.err);
  REQUIRE(cold.exit_code == 0);
  CHECK(util::trim(read_file(l.tmp / "which.txt")) == (masq / "clang-22").string());
  const auto after_cold = l.stats();
  CHECK(counter(after_cold, "misses") > 0);  // split: its passes ran and were stored
  CHECK(counter(after_cold["unchanged_by_reason"], "not clang") == 0);
  const std::string object = read_file(l.tmp / "k.o");
  fs::remove(l.tmp / "k.o");
  auto warm = l.cc({"make", "-s", "CC=clang-22", "k.o"}, path);
  REQUIRE(warm.exit_code == 0);
  const auto after_warm = l.stats();
  CHECK(counter(after_warm, "misses") == counter(after_cold, "misses"));
  CHECK(counter(after_warm, "hits") > counter(after_cold, "hits"));
  CHECK(read_file(l.tmp / "k.o") == object);
  // Anything else runs the real compiler unchanged.
  auto version = l.cc({(masq / "clang-22").string(), "--version"}, path);
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::Contains("clang version 22"));
}

TEST_CASE("masquerade: no real compiler behind the symlink, bad names and files in the way are clear errors",
          "[launcher][integration][masquerade]") {
  Launcher l;
  const fs::path masq = l.tmp / "masq";
  REQUIRE(l.ob({"masquerade", masq.string(), "clang-22"}).exit_code == 0);
  // PATH holds only the masquerade directory: nothing to launch.
  auto alone = l.cc({(masq / "clang-22").string(), "--version"}, {{"PATH", masq.string()}});
  CHECK(alone.exit_code == 127);
  CHECK_THAT(alone.err, Catch::Contains("no other clang-22 is on PATH"));
  // Not a compiler's name: refused, nothing written.
  auto bad = l.ob({"masquerade", masq.string(), "clang-22", "ls"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("'ls' is not a compiler name"));
  CHECK_FALSE(fs::exists(masq / "ls"));
  // A file that is not a symlink is never overwritten.
  write_file(masq / "gcc", "mine\n");
  auto taken = l.ob({"masquerade", masq.string(), "gcc"});
  CHECK(taken.exit_code != 0);
  CHECK_THAT(taken.err, Catch::Contains("is not a symlink"));
  CHECK(read_file(masq / "gcc") == "mine\n");
  // Without names: the compilers PATH has (clang-22 from /usr/bin at least).
  const fs::path all = l.tmp / "all";
  auto found = l.ob({"masquerade", all.string()}, {{"PATH", path_with(masq)}});
  INFO(found.out + found.err);
  REQUIRE(found.exit_code == 0);
  CHECK(fs::is_symlink(all / "clang-22"));
  CHECK_FALSE(fs::exists(all / "offload-build"));
}
