// One clang however it is spelled or found (toolchain/program_identity.hpp):
// a bare name found on PATH is keyed by the program PATH finds, so its whole
// entry is stored and served; the same binary reached through another path
// shares every job's entry; clang and clang++ (one binary, two driver modes)
// never share one, and --explain names the compiler when only it differs.
#include <catch2/catch.hpp>

#include "integration/launcher_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const char* kSource = R"(#include <stdio.h>
int main(void) {
  int out[4] = {0};
#pragma omp target teams distribute parallel for map(from: out)
  for (int i = 0; i < 4; ++i) out[i] = i * 3;
  printf("%d\n", out[3]);
  return 0;
}
)";

const std::string kLlvmBin = "/usr/lib/llvm-22/bin";

int stat(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

std::string llvm_first_path() {
  const char* path = std::getenv("PATH");
  return kLlvmBin + ":" + (path ? path : "/usr/bin:/bin");
}

}  // namespace

TEST_CASE("a compiler named bare, found on PATH, is served whole the second time",
          "[launcher][integration][identity]") {
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  // As LLVM's apt instructions set it: its bin directory first.
  const std::string path = GENERATE(llvm_first_path(), std::string(std::getenv("PATH") ? std::getenv("PATH") : ""));
  INFO("PATH=" << path);
  const Argv compile{"clang-22", "-fopenmp", kHostTargets, "-O2", "-c", "k.c", "-o", "k.o"};
  REQUIRE(l.ob(compile, {{"PATH", path}}).exit_code == 0);
  auto first = l.stats();
  fs::remove(l.tmp / "k.o");
  auto second = l.ob(compile, {{"PATH", path}});
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  auto after = l.stats();
  CHECK(stat(after, "whole_compiles") == stat(first, "whole_compiles") + 1);
  CHECK(stat(after, "misses") == stat(first, "misses"));
  REQUIRE(l.cc({kClang, "-fopenmp", kHostTargets, "k.o", "-o", "k"}).exit_code == 0);
  CHECK(l.cc({(l.tmp / "k").string()}, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}}).out == "9\n");
}

TEST_CASE("one binary reached through two paths shares every job's entry, and clang and clang++ share none",
          "[launcher][integration][identity]") {
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  const Argv args{"-fopenmp", kHostTargets, "-O2", "-c", "k.c", "-o", "k.o"};
  // --explain: every job asked, no whole entry.
  auto through_llvm = l.ob(concat({"--explain", "clang++-22"}, args), {{"PATH", llvm_first_path()}});
  INFO(through_llvm.err);
  REQUIRE(through_llvm.exit_code == 0);
  auto first = l.stats();
  CHECK(stat(first, "misses") == 4);
  const std::string object = read_file(l.tmp / "k.o");

  // /usr/bin/clang++-22 is a link to the same binary: every job served.
  auto through_usr_bin = l.ob(concat({"--explain", kClangxx}, args));
  INFO(through_usr_bin.err);
  REQUIRE(through_usr_bin.exit_code == 0);
  auto second = l.stats();
  CHECK(stat(second, "misses") == stat(first, "misses"));
  CHECK(stat(second, "hits") == stat(first, "hits") + 4);
  CHECK(read_file(l.tmp / "k.o") == object);

  // clang (C) is another driver mode of that binary: nothing shared, and
  // --explain says that the compiler alone differs.
  auto as_c = l.ob(concat({"--explain", kClang}, args));
  INFO(as_c.err);
  REQUIRE(as_c.exit_code == 0);
  // (The package may hit: the device object can come out the same bytes.)
  auto third = l.stats();
  CHECK(stat(third, "misses") >= stat(second, "misses") + 3);
  CHECK_THAT(as_c.err, Catch::Contains("explain: host-ir k.c: miss: only its compiler differs") &&
                           Catch::Contains("driver-mode=gcc here") && Catch::Contains("driver-mode=g++ there"));
  CHECK_THAT(as_c.err, Catch::Contains("explain: host k.c: miss: only its compiler differs"));
}

TEST_CASE("options before a compiler name are offload-build's, as before `wrap --`",
          "[launcher][integration][identity]") {
  Launcher l;
  auto version = l.ob({"-v", "clang++-22", "--version"});
  INFO(version.err);
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::Contains("clang version 22"));
  CHECK_THAT(version.err, Catch::Contains("running the compiler unchanged"));

  write_file(l.tmp / "k.c", kSource);
  const Argv compile{kClang, "-fopenmp", kHostTargets, "-c", "k.c", "-o", "k.o"};
  auto options_first = l.ob(concat({"--dry-run", "--kernel-namespace", "n1"}, compile));
  auto wrapped = l.ob(concat({"--dry-run", "--kernel-namespace", "n1", "wrap", "--"}, compile));
  INFO(options_first.err);
  REQUIRE(options_first.exit_code == 0);
  CHECK(options_first.out == wrapped.out);
  CHECK_THAT(options_first.out, Catch::Contains("llvm-offload-binary"));
  CHECK_FALSE(fs::exists(l.tmp / "k.o"));  // a dry run
}
