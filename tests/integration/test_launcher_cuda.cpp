// The CUDA flags shipped Makefiles carry (miniFE's openmp45 Makefile):
// --cuda-path=DIR and -Xcuda-ptxas ARG are split as clang splits them and
// cached, DIR's ptxas and libdevice keyed as the toolchain's; -v runs the
// compile unchanged and says so once per build without being asked (#54).
#include <catch2/catch.hpp>

#include "integration/launcher_support.hpp"
#include "support/llvm_prefix.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kSource = kWorkKernel;

const fs::path kCuda = "/usr/local/cuda";

// A CUDA installation at `dir` that is /usr/local/cuda but for its ptxas, a
// script that runs CUDA's (`comment`: a line that changes the script's bytes).
void fake_cuda(const fs::path& dir, const std::string& comment) {
  fs::create_directories(dir / "bin");
  std::error_code ec;
  for (const char* sub : {"include", "nvvm", "version.json", "version.txt", "lib64"})
    if (fs::exists(kCuda / sub, ec) && !fs::exists(dir / sub, ec)) fs::create_directory_symlink(kCuda / sub, dir / sub, ec);
  write_file(dir / "bin/ptxas", "#!/bin/sh\n# " + comment + "\nexec " + (kCuda / "bin/ptxas").string() + " \"$@\"\n");
  fs::permissions(dir / "bin/ptxas", fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

int counter(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

// ptxas -v's report without its "Compile time = N ms" lines.
std::string without_times(const std::string& report) {
  std::string out;
  for (const auto& line : util::split(report, '\n'))
    if (line.find("Compile time =") == std::string::npos) out += std::string(line) + "\n";
  return out;
}

}  // namespace

TEST_CASE("launcher: --cuda-path and -Xcuda-ptxas are split and cached, byte-identical, DIR's ptxas keyed",
          "[launcher][integration][llvm19][cuda]") {
  OB_LLVM19(root);
  if (!fs::exists(kCuda / "bin/ptxas")) OB_SKIP("no CUDA ptxas at /usr/local/cuda (the sm_80 device pass)");
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  const fs::path cuda = l.tmp / "cuda";
  fake_cuda(cuda, "one");
  const Argv compile{(root / "bin/clang").string(), "-fopenmp", "--offload-arch=sm_80",
                     "--libomptarget-nvptx-bc-path=" + (root / "lib").string(), "--cuda-path=" + cuda.string(),
                     "-Xcuda-ptxas", "-v", "-O2"};
  // Split (its passes missed), the same bytes and stderr as clang's with the
  // same kernel names: ptxas's own -v report, once.
  const Argv got_args = concat(compile, {"-c", "k.c", "-o", "got.o"});
  const Env names = stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, got_args)).out);
  REQUIRE(names.size() == 2);
  auto ref = l.cc(concat(compile, {"-c", "k.c", "-o", "ref.o"}), names);
  INFO(ref.err);
  REQUIRE(ref.exit_code == 0);
  const auto cold = l.stats();
  auto got = l.ob(got_args);
  INFO(got.err);
  REQUIRE(got.exit_code == 0);
  CHECK(counter(l.stats(), "misses") > counter(cold, "misses"));
  CHECK(l.stats()["unchanged_by_reason"] == cold["unchanged_by_reason"]);
  CHECK(count_occurrences(ref.err, "ptxas info    : Compiling entry function") == 1);
  CHECK(without_times(got.err) == without_times(ref.err));
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));

  const Argv to_object = concat(compile, {"-c", "k.c", "-o", "k.o"});
  auto first = l.ob(to_object);
  REQUIRE(first.exit_code == 0);
  const std::string object = read_file(l.tmp / "k.o");
  // Served again: ptxas's report replayed.
  fs::remove(l.tmp / "k.o");
  const auto before = l.stats();
  auto again = l.ob(to_object);
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(counter(l.stats(), "misses") == counter(before, "misses"));
  CHECK(count_occurrences(again.err, "ptxas info    : Compiling entry function") == 1);
  CHECK(read_file(l.tmp / "k.o") == object);

  // Another ptxas in DIR: its device pass misses.
  fake_cuda(cuda, "two");
  const auto edited = l.stats();
  auto other = l.ob(to_object);
  INFO(other.err);
  REQUIRE(other.exit_code == 0);
  CHECK(counter(l.stats(), "misses") > counter(edited, "misses"));
  CHECK(l.stats()["unchanged_by_reason"] == edited["unchanged_by_reason"]);
}

TEST_CASE("launcher: -v keeps an offload compile whole and says so once per build, without being asked",
          "[launcher][integration][flagkeys]") {
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  const Argv verbose{kClang, "-fopenmp", kHostTargets, "-O2", "-v", "-c", "k.c", "-o", "k.o"};
  const std::string note = "offload-build: running the compiler unchanged: option -v";
  auto first = l.ob(verbose);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(count_occurrences(first.err, note) == 1);
  CHECK_THAT(first.err, Catch::Contains("clang version"));  // clang's own -v report, unchanged
  auto second = l.ob(verbose);  // the same build (this test's process is its make)
  REQUIRE(second.exit_code == 0);
  CHECK(count_occurrences(second.err, note) == 0);
  CHECK(counter(l.stats()["unchanged_by_reason"], "unsupported option") == 2);
  // A compile without offload targets runs unchanged silently, as it always did.
  auto plain = l.ob({kClang, "-O2", "-ftime-trace", "-c", "k.c", "-o", "p.o"});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.err.find("offload-build") == std::string::npos);
}
