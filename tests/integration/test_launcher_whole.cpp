// A launcher compile's whole entry (cache/whole_compile.hpp): once a split
// compile succeeded, the next identical compile is served from one entry
// (object, depfile, warnings) without the split; anything its jobs read,
// the tools they ran and the settings that shape the split decide it.
#include <catch2/catch.hpp>

#include <fstream>

#include "integration/launcher_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::trunc) << text;
}

// A kernel whose result depends on k.h, and an unused variable to warn about.
const char* kSource = R"(#include <stdio.h>
#include "k.h"
int main(void) {
  int unused;
  int out[4] = {0};
#pragma omp target teams distribute parallel for map(from: out)
  for (int i = 0; i < 4; ++i) out[i] = i * K;
  printf("%d\n", out[3]);
  return 0;
}
)";

int count(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

}  // namespace

TEST_CASE("a launcher compile is served whole the second time: object, depfile and warnings, and no split",
          "[launcher][integration][whole]") {
  Launcher l;
  write(l.tmp / "k.c", kSource);
  write(l.tmp / "k.h", "#define K 3\n");
  const Argv compile{kClang, "-fopenmp", kHostTargets, "-O2", "-Wall", "-MD", "-MF", "k.o.d", "-c", "k.c", "-o", "k.o"};
  auto first = l.ob(compile);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE_THAT(first.err, Catch::Contains("unused variable 'unused'"));
  auto after_first = l.stats();
  CHECK(count(after_first, "whole_compiles") == 0);
  const std::string object = read_file(l.tmp / "k.o");
  const std::string depfile = read_file(l.tmp / "k.o.d");
  fs::remove(l.tmp / "k.o");
  fs::remove(l.tmp / "k.o.d");

  auto second = l.ob(compile);
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  auto after_second = l.stats();
  CHECK(count(after_second, "whole_compiles") == 1);
  // Counted as the jobs it stands for: host-ir, device, package, host.
  CHECK(count(after_second, "hits") - count(after_first, "hits") == 4);
  CHECK(count(after_second, "misses") == count(after_first, "misses"));
  CHECK(read_file(l.tmp / "k.o") == object);
  CHECK(read_file(l.tmp / "k.o.d") == depfile);
  CHECK(second.err == first.err);  // the warning again, once
  CHECK_FALSE(fs::exists(l.tmp / "k.o.offload-build"));
  for (const auto& e : fs::directory_iterator(l.tmp.path()))
    CHECK(e.path().filename().string().find(".ob-tmp-") == std::string::npos);

  // It links and runs, offloaded.
  auto link = l.cc({kClang, "-fopenmp", kHostTargets, "k.o", "-o", "k"});
  REQUIRE(link.exit_code == 0);
  auto run = l.cc({(l.tmp / "k").string()}, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "9\n");
}

TEST_CASE("a whole entry is not served when a header, a setting or the command changed",
          "[launcher][integration][whole]") {
  Launcher l;
  write(l.tmp / "k.c", kSource);
  write(l.tmp / "k.h", "#define K 3\n");
  const Argv compile{kClang, "-fopenmp", kHostTargets, "-O2", "-c", "k.c", "-o", "k.o"};
  REQUIRE(l.ob(compile).exit_code == 0);
  const std::string k3 = read_file(l.tmp / "k.o");
  auto whole = [&](const Argv& argv, Env env = {}) {
    const int before = count(l.stats(), "whole_compiles");
    auto r = l.ob(argv, std::move(env));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return count(l.stats(), "whole_compiles") - before;
  };
  CHECK(whole(compile) == 1);

  SECTION("a header it includes") {
    write(l.tmp / "k.h", "#define K 5\n");
    CHECK(whole(compile) == 0);
    CHECK(read_file(l.tmp / "k.o") != k3);
    CHECK(whole(compile) == 1);  // stored again for the new header
    REQUIRE(l.cc({kClang, "-fopenmp", kHostTargets, "k.o", "-o", "k"}).exit_code == 0);
    CHECK(l.cc({(l.tmp / "k").string()}, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}}).out == "15\n");
  }
  SECTION("the kernel namespace (kernel names)") {
    CHECK(whole(compile, {{"OFFLOAD_BUILD_KERNEL_NAMESPACE", "other"}}) == 0);
    CHECK(read_file(l.tmp / "k.o") != k3);
  }
  SECTION("two parses instead of one") { CHECK(whole(compile, {{"OFFLOAD_BUILD_TWO_PARSE", "1"}}) == 0); }
  SECTION("a flag") {
    CHECK(whole({kClang, "-fopenmp", kHostTargets, "-O1", "-c", "k.c", "-o", "k.o"}) == 0);
  }
  SECTION("--explain and -v see every job: no whole entry") {
    CHECK(whole(compile, {{"OFFLOAD_BUILD_EXPLAIN", "1"}}) == 0);
    CHECK(whole(compile, {{"OFFLOAD_BUILD_VERBOSE", "1"}}) == 0);
  }
}
