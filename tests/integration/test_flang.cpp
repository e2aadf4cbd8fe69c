// Fortran through the flang frontend (docs/FORTRAN.md): a launcher compile
// and a manifest's sources split into device pass, package and host pass,
// cached, and byte-identical to flang-22's own one-shot compile.
#include <catch2/catch.hpp>

#include "launcher_support.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kFlang = "/usr/bin/flang-22";

// A target region: its kernel is named from the source's place, as clang's are.
const char* const kFortran = R"(program saxpy
  implicit none
  integer, parameter :: n = 1000
  real :: x(n), y(n)
  integer :: i
  x = 1.0
  y = 2.0
  !$omp target teams distribute parallel do map(to:x) map(tofrom:y)
  do i = 1, n
    y(i) = 2.0 * x(i) + y(i)
  end do
  print '(A,F8.1)', 'y(n) = ', y(n)
end program
)";

int counter(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

}  // namespace

TEST_CASE("flang launcher compiles are split, cached and byte-identical to flang's", "[launcher][flang][integration]") {
  Launcher l;
  write_file(l.tmp / "saxpy.f90", kFortran);
  const Argv compile{kFlang, "-fopenmp", kHostTargets, "-O2"};
  const Argv got_args = concat(compile, {"-c", "saxpy.f90", "-o", "got.o"});
  // The same environment as the split passes (the stable-names library, when they use it).
  const Env names = stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, got_args)).out);
  auto ref = l.cc(concat(compile, {"-c", "saxpy.f90", "-o", "ref.o"}), names);
  REQUIRE(ref.exit_code == 0);

  // -v says how it was split: as flang's one-shot compile, one host parse,
  // a device -fc1 reading its IR, the package, the host codegen from the IR.
  auto said = l.ob(got_args, {{"OFFLOAD_BUILD_VERBOSE", "1"}});
  INFO(said.err);
  REQUIRE(said.exit_code == 0);
  CHECK_THAT(said.err, Catch::Contains("splitting into one host parse, 1 device pass, package, host codegen"));
  CHECK_THAT(said.err, Catch::Contains("-fopenmp-host-ir-file-path"));
  CHECK_THAT(said.err, Catch::Contains("-fembed-offload-object="));
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));
  const auto first = l.stats();
  CHECK(counter(first, "misses") == 4);  // host parse, device, package, host: nothing ran unchanged
  CHECK(first["unchanged_by_reason"].empty());

  fs::remove(l.tmp / "got.o");
  auto again = l.ob(got_args);
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  const auto second = l.stats();
  CHECK(counter(second, "hits") == counter(first, "hits") + 4);
  CHECK(counter(second, "misses") == counter(first, "misses"));
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));
  CHECK_FALSE(fs::exists(l.tmp / "got.o.offload-build"));
}

TEST_CASE("a flang compile using a module is keyed by the module file's content", "[launcher][flang][integration]") {
  Launcher l;
  // USE of a module of the project: flang lists no files read; the scan
  // finds m.mod (in the working directory, where flang looks) and keys it.
  write_file(l.tmp / "m.f90", "module m\n  integer, parameter :: n = 4\nend module\n");
  write_file(l.tmp / "u.f90",
             "program u\n  use m\n  integer :: a(n), i\n  !$omp target map(tofrom:a)\n  do i = 1, n\n"
             "    a(i) = i\n  end do\n  !$omp end target\n  print *, a(n)\nend program\n");
  REQUIRE(l.cc({kFlang, "-c", "m.f90", "-o", "m.o"}).exit_code == 0);
  const Argv got_args{kFlang, "-fopenmp", kHostTargets, "-c", "u.f90", "-o", "got.o"};
  const Env names = stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, got_args)).out);
  REQUIRE(l.cc({kFlang, "-fopenmp", kHostTargets, "-c", "u.f90", "-o", "ref.o"}, names).exit_code == 0);
  for (int i = 0; i < 2; ++i) {
    auto got = l.ob(got_args);
    INFO(got.err);
    REQUIRE(got.exit_code == 0);
    CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));
  }
  CHECK(counter(l.stats(), "hits") == 4);
  // Another module interface: the host parse and the device pass miss.
  write_file(l.tmp / "m.f90", "module m\n  integer, parameter :: n = 5\nend module\n");
  REQUIRE(l.cc({kFlang, "-c", "m.f90", "-o", "m.o"}).exit_code == 0);
  REQUIRE(l.ob(got_args).exit_code == 0);
  CHECK(counter(l.stats(), "misses") == 4 + 4);  // the package and host codegen change with them
}

TEST_CASE("flang command lines offload-build does not split run unchanged", "[launcher][flang][integration]") {
  Launcher l;
  write_file(l.tmp / "saxpy.f90", kFortran);
  // -MD: flang refuses it; the compiler says so itself.
  auto r = l.ob({kFlang, "-fopenmp", kHostTargets, "-MD", "-c", "saxpy.f90", "-o", "x.o"});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("unknown argument: '-MD'"));
  CHECK(l.stats()["unchanged_by_reason"].value("unsupported option", 0) == 1);
  // No offload targets: flang's own compile.
  REQUIRE(l.ob({kFlang, "-fopenmp", "-c", "saxpy.f90", "-o", "plain.o"}).exit_code == 0);
  CHECK(l.stats()["unchanged_by_reason"].value("not an offload compile", 0) == 1);
  CHECK(fs::exists(l.tmp / "plain.o"));
}

TEST_CASE("mpifort wrapping flang is split like flang", "[launcher][flang][mpi][integration]") {
  Launcher l;
  if (!fs::exists("/usr/bin/mpifort.openmpi")) OB_SKIP("no Open MPI mpifort installed");
  write_file(l.tmp / "saxpy.f90", kFortran);
  const Env fc{{"OMPI_FC", kFlang}};
  auto r = l.ob({"mpifort.openmpi", "-fopenmp", kHostTargets, "-c", "saxpy.f90", "-o", "got.o"}, fc);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(counter(l.stats(), "misses") == 4);
  CHECK(l.stats()["unchanged_by_reason"].empty());
  CHECK(fs::exists(l.tmp / "got.o"));
}

TEST_CASE("a manifest's Fortran sources are split and cached, and the link says why it fails", "[build][flang][integration]") {
  TempDir tmp("ob-flang");
  const fs::path project = tmp / "p";
  fs::create_directories(project);
  write_file(project / "saxpy.f90", kFortran);
  write_file(project / "offload.json",
             R"({"name": "saxpy", "output": "saxpy", "sources": ["saxpy.f90"], "targets": ["host"], "flags": ["-O2"]})");
  const Env env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()}};
  auto first = run_ob({"build"}, project, env);
  INFO(first.out << first.err);
  // Compiled (device, package, host), then the link fails: no runtime defines
  // flang's device-runtime calls for the host device.
  CHECK(first.exit_code != 0);
  CHECK_THAT(first.err + first.out, Catch::Contains("__kmpc_"));
  auto stats = nlohmann::json::parse(run_ob({"cache", "stats", "--json"}, project, env).out);
  CHECK(stats.value("misses", 0) == 5);  // host parse, device, package, host, link
  // The object is flang-22's own one-shot compile's, given the same environment.
  const Env names = stable_names_env(run_ob({"build", "--dry-run"}, project, env).out);
  CHECK(names.size() >= 2);  // the stable-names library and the salt
  auto ref = run_tool({kFlang, "-fopenmp", kHostTargets, "-O2", "-c", "saxpy.f90", "-o", "ref.o"}, project, names);
  REQUIRE(ref.exit_code == 0);
  CHECK(read_file(project / "build/obj/saxpy.f90.host.o") == read_file(project / "ref.o"));
  // From a clean build directory, every compile job is a hit.
  fs::remove_all(project / "build");
  auto second = run_ob({"build"}, project, env);
  CHECK(second.exit_code != 0);
  auto again = nlohmann::json::parse(run_ob({"cache", "stats", "--json"}, project, env).out);
  CHECK(again.value("hits", 0) == stats.value("hits", 0) + 4);  // the compile's four jobs
}

TEST_CASE("a Fortran offload program links and runs", "[build][flang][integration]") {
  TempDir tmp("ob-flang-run");
  write_file(tmp / "saxpy.f90", kFortran);
  // Checked, not assumed: once a runtime provides flang's device-runtime
  // entry points for the host device, this test runs instead of skipping.
  auto linked = run_tool({kFlang, "-fopenmp", kHostTargets, "saxpy.f90", "-o", "saxpy"}, tmp.path(), {});
  if (linked.exit_code != 0 && linked.err.find("__kmpc_") != std::string::npos)
    OB_SKIP("flang-22 offload programs do not link: no runtime provides __kmpc_target_init for the host device");
  REQUIRE(linked.exit_code == 0);
  auto ran = run_tool({(tmp / "saxpy").string()}, tmp.path(), {});
  CHECK(ran.exit_code == 0);
  CHECK_THAT(ran.out, Catch::Contains("y(n) =      4.0"));
}
