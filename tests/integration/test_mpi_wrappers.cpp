// MPI compiler wrappers (toolchain/frontends/compiler_wrapper.hpp): Open MPI's
// and MPICH's mpicxx are asked what they run; when that is clang the compile
// is split and cached, byte-identical to the wrapper's own compile, its link
// cached as a link, and the program runs on two ranks, offloaded. A wrapper
// around another compiler runs unchanged.
#include <catch2/catch.hpp>

#include "integration/launcher_support.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// Each rank offloads its own sum; rank 0 prints the reduction.
const char* kProgram = R"(#include <mpi.h>
#include <omp.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long sum = 0;
  int initial = 1;
#pragma omp target map(tofrom: sum, initial)
  {
    initial = omp_is_initial_device();
    for (int i = 0; i < 1000; ++i) sum += (long)i * (rank + 1);
  }
  long total = 0;
  MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("offloaded=%d total=%ld\n", !initial, total);
  MPI_Finalize();
  return 0;
}
)";

struct Mpi {
  std::string family;
  std::string wrapper;      // mpicxx of that MPI
  std::string compiler_var; // the variable naming its C++ compiler
  Argv mpirun;              // two ranks
};

const Mpi kOpenMpi{"Open MPI", "/usr/bin/mpicxx.openmpi", "OMPI_CXX",
                   {"/usr/bin/mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", "2"}};
const Mpi kMpich{"MPICH", "/usr/bin/mpicxx.mpich", "MPICH_CXX", {"/usr/bin/mpirun.mpich", "-np", "2"}};

int stat(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

}  // namespace

TEST_CASE("MPI wrappers: the compile is split, cached and the wrapper's own bytes, the link is cached, "
          "two ranks run offloaded",
          "[launcher][integration][mpi]") {
  const Mpi mpi = GENERATE(kOpenMpi, kMpich);
  INFO(mpi.family);
  if (!fs::exists(mpi.wrapper) || !fs::exists(mpi.mpirun.front())) {
    OB_SKIP("no " << mpi.family << " (" << mpi.wrapper << "): scripts/setup.sh installs it");
    return;
  }
  Launcher l;
  write_file(l.tmp / "prog.cpp", kProgram);
  const Env cxx{{mpi.compiler_var, kClangxx}};
  const Argv flags{"-fopenmp", kHostTargets, "-O2"};

  // The wrapper's own compile, with the kernel names the split gives.
  const Argv got_args = concat(concat({mpi.wrapper}, flags), {"-c", "prog.cpp", "-o", "got.o"});
  Env names = stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, got_args), cxx).out);
  REQUIRE(names.size() == 2);
  names.insert(names.end(), cxx.begin(), cxx.end());
  auto ref = l.cc(concat(concat({mpi.wrapper}, flags), {"-c", "prog.cpp", "-o", "ref.o"}), names);
  INFO(ref.err);
  REQUIRE(ref.exit_code == 0);

  auto before = l.stats();
  auto got = l.ob(got_args, cxx);
  INFO(got.err);
  REQUIRE(got.exit_code == 0);
  auto split = l.stats();
  CHECK(stat(split, "misses") > stat(before, "misses"));  // split, not run unchanged
  CHECK(split["unchanged_by_reason"] == before["unchanged_by_reason"]);
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));

  // -v says what the wrapper runs.
  auto said = l.ob(concat({"-v", "--dry-run"}, got_args), cxx);
  CHECK_THAT(said.err, Catch::Contains("(" + mpi.family + ") runs " + kClangxx));

  // Again: served whole from the cache.
  fs::remove(l.tmp / "got.o");
  REQUIRE(l.ob(got_args, cxx).exit_code == 0);
  auto again = l.stats();
  CHECK(stat(again, "whole_compiles") == stat(split, "whole_compiles") + 1);
  CHECK(stat(again, "misses") == stat(split, "misses"));
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));

  // The link through the wrapper is an offload link: cached as one.
  const Argv link = concat(concat({mpi.wrapper}, flags), {"got.o", "-o", "prog"});
  auto linked = l.ob(link, cxx);
  INFO(linked.err);
  REQUIRE(linked.exit_code == 0);
  auto after_link = l.stats();
  CHECK(stat(after_link, "misses") == stat(again, "misses") + 1);
  fs::remove(l.tmp / "prog");
  REQUIRE(l.ob(link, cxx).exit_code == 0);
  auto relinked = l.stats();
  CHECK(stat(relinked, "hits") == stat(after_link, "hits") + 1);
  CHECK(relinked["unchanged_by_reason"] == before["unchanged_by_reason"]);

  // Two ranks, each offloading: 499500 * (1 + 2).
  auto run = l.cc(concat(mpi.mpirun, {(l.tmp / "prog").string()}), {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "offloaded=1 total=1498500\n");
}

TEST_CASE("MPI wrappers: one around another compiler than clang runs unchanged, and says why under -v",
          "[launcher][integration][mpi]") {
  if (!fs::exists(kOpenMpi.wrapper)) {
    OB_SKIP("no Open MPI (" << kOpenMpi.wrapper << "): scripts/setup.sh installs it");
    return;
  }
  Launcher l;
  write_file(l.tmp / "plain.cpp", "int twice(int x) { return 2 * x; }\n");
  auto before = l.stats();
  auto r = l.ob({"-v", kOpenMpi.wrapper, "-O2", "-c", "plain.cpp", "-o", "plain.o"}, {{"OMPI_CXX", "g++"}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(l.tmp / "plain.o"));
  CHECK_THAT(r.err, Catch::Contains("mpicxx.openmpi (Open MPI) wraps g++, not clang or flang"));
  auto after = l.stats();
  CHECK(stat(after, "misses") == stat(before, "misses"));
  CHECK(after["unchanged_by_reason"].value("not clang", 0) == before["unchanged_by_reason"].value("not clang", 0) + 1);
}
