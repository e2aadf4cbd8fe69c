// The LLVM a user has: LLVM 19 from a private prefix (scripts/setup.sh --llvm
// 19) beside the system's LLVM 22. LLVM 19 ships the OpenMP GPU device
// runtime, so generic OpenMP programs (not only ompx_bare kernels) link for
// sm_90 and gfx90a; on the host device they run here.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/cache_stats.hpp"
#include "support/llvm_prefix.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const Env kMandatoryWithLog = {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"}};

// `example` copied into `tmp`, its manifest pointed at `root` for `targets`.
fs::path project_with(const std::string& example, const TempDir& tmp, const fs::path& root,
                      const std::vector<std::string>& targets) {
  const fs::path dir = copy_example(example, tmp.path());
  auto m = nlohmann::json::parse(read_file(dir / "offload.json"));
  m["toolchain"] = root.string();
  m["targets"] = targets;
  write_file(dir / "offload.json", m.dump());
  return dir;
}

bool has_cuda() { return fs::exists("/usr/local/cuda/bin/ptxas"); }

}  // namespace

TEST_CASE("LLVM 19 from a private prefix builds saxpy-c and it runs on the host device under MANDATORY",
          "[integration][llvm19]") {
  OB_LLVM19(root);
  TempDir tmp;
  const fs::path dir = project_with("saxpy-c", tmp, root, {"host"});
  auto r = build_project(dir, tmp / "cache");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The program needs LLVM 19's runtime: started with it, it offloads.
  const Env with_19 = {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"},
                       {"LD_LIBRARY_PATH", (root / "lib").string()}};
  auto run = run_tool({(dir / "build/saxpy").string()}, dir, with_19);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n");
  CHECK(count_occurrences(run.err, "Launching kernel __omp_offloading_") == 1);
  // `run --verify` starts it with the runtime of the LLVM it was linked with
  // (LLVM 22's libomptarget.so.22.1 is not the libomptarget.so.19.1 it needs).
  auto verify = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "run", "--verify"});
  INFO(verify.err);
  CHECK(verify.exit_code == 0);
  CHECK_THAT(verify.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch on device 0"));
  // The package is LLVM 19's clang-offload-packager, the host image's arch spelled as its driver does.
  auto dry = run_ob({"-C", dir.string(), "--no-cache", "--dry-run", "build"});
  CHECK_THAT(dry.out, Catch::Contains((root / "bin/clang-offload-packager").string() + " -o "));
  CHECK_THAT(dry.out, Catch::Contains("triple=x86_64-unknown-linux-gnu,arch=,kind=openmp"));
}

TEST_CASE("LLVM 19: generic OpenMP programs link for host, sm_90 and gfx90a, images listed, and run on the host",
          "[integration][llvm19]") {
  OB_LLVM19(root);
  if (!has_cuda()) OB_SKIP("no CUDA ptxas at /usr/local/cuda (the sm_90 device link)");
  for (const std::string example : {"saxpy-c", "vector-cxx"}) {
    SECTION(example) {
      TempDir tmp;
      const fs::path dir = project_with(example, tmp, root, {"host", "sm_90", "gfx90a"});
      auto r = build_project(dir, tmp / "cache");
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const fs::path program = dir / "build" / (example == "saxpy-c" ? "saxpy" : "vector");
      auto listing = run_tool({(root / "bin/llvm-objdump").string(), "--offloading", program.string()});
      REQUIRE(listing.exit_code == 0);
      CHECK(count_occurrences(listing.out, "OFFLOADING IMAGE") == 3);  // one per target, every TU linked in
      CHECK_THAT(listing.out, Catch::Contains("arch            sm_90\ntriple          nvptx64-nvidia-cuda"));
      CHECK_THAT(listing.out, Catch::Contains("arch            gfx90a\ntriple          amdgcn-amd-amdhsa"));
      // A generic target region calls the device runtime (__kmpc_target_init):
      // linked, not refused as with LLVM 22.
      auto run = run_tool({program.string()}, dir,
                          {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"},
                           {"LD_LIBRARY_PATH", (root / "lib").string()}});
      INFO(run.err);
      CHECK(run.exit_code == 0);
      CHECK(count_occurrences(run.err, "Launching kernel __omp_offloading_") == (example == "saxpy-c" ? 1 : 3));
    }
  }
}

TEST_CASE("LLVM 19: each object is byte-identical to plain clang-19's with the same names",
          "[integration][llvm19]") {
  OB_LLVM19(root);
  if (!has_cuda()) OB_SKIP("no CUDA ptxas at /usr/local/cuda (the sm_90 device link)");
  const std::string x86 = "x86_64-unknown-linux-gnu";
  struct Case {
    std::vector<std::string> targets, plain;
  };
  // What plain clang-19 from a private prefix needs: the nvptx bitcode's
  // directory, and -nogpulib for gfx90a without ROCm's device libraries.
  const std::vector<Case> cases = {
      {{"host", "sm_90"},
       {"-fopenmp-targets=" + x86 + ",nvptx64-nvidia-cuda", "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90",
        "--libomptarget-nvptx-bc-path=" + (root / "lib").string()}},
      {{"host", "gfx90a"},
       {"-fopenmp-targets=" + x86 + ",amdgcn-amd-amdhsa", "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a",
        "-nogpulib"}},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.targets.back()) {
      TempDir tmp;
      const fs::path dir = project_with("saxpy-c", tmp, root, c.targets);
      auto r = run_ob({"-C", dir.string(), "--no-cache", "build"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const Env names = stable_names_env(run_ob({"-C", dir.string(), "--dry-run", "build"}).out);
      REQUIRE(names.size() == 4);
      std::vector<std::string> plain{(root / "bin/clang").string(), "-fopenmp"};
      plain.insert(plain.end(), c.plain.begin(), c.plain.end());
      plain.insert(plain.end(), {"-O2", "-c", "saxpy.c", "-o", "plain.o"});
      Env env = names;
      env.emplace_back("PATH", std::string("/usr/local/cuda/bin:") + std::getenv("PATH"));
      auto one = run_tool(plain, dir, env);
      INFO(one.err);
      REQUIRE(one.exit_code == 0);
      const std::string ours = read_file(dir / "build/obj/saxpy.c.host.o");
      REQUIRE(ours.size() > 1000);
      CHECK(ours == read_file(dir / "plain.o"));
    }
  }
}

TEST_CASE("LLVM 19 and LLVM 22 share a cache and never each other's entries", "[integration][llvm19][cache]") {
  OB_LLVM19(root);
  TempDir tmp;
  const fs::path cache = tmp / "cache";
  const fs::path dir = project_with("saxpy-c", tmp, "/usr/lib/llvm-22", {"host"});
  REQUIRE(build_project(dir, cache).exit_code == 0);
  CHECK(count_occurrences(run_tool({"readelf", "-d", (dir / "build/saxpy").string()}).out, "libomptarget.so.22") == 1);
  auto m = nlohmann::json::parse(read_file(dir / "offload.json"));
  m["toolchain"] = root.string();
  write_file(dir / "offload.json", m.dump());
  auto r = build_project(dir, cache, {"--explain"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.out + r.err, ": hit") == 0);
  CHECK(count_occurrences(run_tool({"readelf", "-d", (dir / "build/saxpy").string()}).out, "libomptarget.so.19") == 1);
  // And back: LLVM 22's entries are still there, and only they serve it.
  m["toolchain"] = "/usr/lib/llvm-22";
  write_file(dir / "offload.json", m.dump());
  auto back = build_project(dir, cache, {"--explain"});
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(count_occurrences(back.out + back.err, ": miss") == 0);
  CHECK(count_occurrences(run_tool({"readelf", "-d", (dir / "build/saxpy").string()}).out, "libomptarget.so.22") == 1);
}

TEST_CASE("launcher: clang-19 by path is split and cached, read with clang 19's own flags",
          "[integration][llvm19][launcher]") {
  OB_LLVM19(root);
  TempDir tmp;
  const fs::path dir = copy_example("saxpy-c", tmp.path());
  const fs::path cache = tmp / "cache";
  const std::string clang = (root / "bin/clang").string();
  const std::vector<std::string> compile{"--cache-dir", cache.string(), clang, "-O2", "-fopenmp",
                                         "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", "saxpy.c", "-o", "s.o"};
  auto first = run_ob(compile, dir);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  auto stats = cache_stats(cache);
  CHECK(stats["unchanged_by_reason"].empty());
  CHECK(stats["stores"].get<int>() >= 4);  // its jobs and its whole entry
  fs::remove(dir / "s.o");
  auto second = run_ob(compile, dir);
  REQUIRE(second.exit_code == 0);
  CHECK(cache_stats(cache)["hits"].get<int>() >= 1);
  // Linked through the launcher, it runs offloaded (verify gives it LLVM 19's runtime).
  auto link = run_ob({"--cache-dir", cache.string(), clang, "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                      "s.o", "-o", "s", "-lm"},
                     dir);
  INFO(link.err);
  REQUIRE(link.exit_code == 0);
  auto verify = run_ob({"verify", "--", "./s"}, dir);
  INFO(verify.err);
  CHECK(verify.exit_code == 0);
  CHECK_THAT(verify.err, Catch::Contains("1 kernel launch"));
  // A flag clang 22 has and clang 19 has not: unknown to clang 19's list (it
  // runs unchanged, and clang 19 says so itself), known to clang 22's.
  const std::vector<std::string> fusion{"-O2", "-fexperimental-loop-fusion", "-fopenmp",
                                        "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", "saxpy.c", "-o", "f.o"};
  auto with = [&](const std::string& compiler) {
    std::vector<std::string> argv{"--cache-dir", cache.string(), "-v", compiler};
    argv.insert(argv.end(), fusion.begin(), fusion.end());
    return run_ob(argv, dir);
  };
  auto old = with(clang);
  CHECK(old.exit_code != 0);
  CHECK_THAT(old.err, Catch::Contains("running the compiler unchanged: unknown option -fexperimental-loop-fusion"));
  auto now = with(std::string(kLlvmBin) + "/clang");
  INFO(now.err);
  CHECK(now.exit_code == 0);
  CHECK_THAT(now.err, Catch::Contains("offload-build: splitting into"));
}

TEST_CASE("doctor names LLVM 19's device runtimes, and LLVM 22's missing runtime names LLVM 19",
          "[integration][llvm19][doctor]") {
  OB_LLVM19(root);
  auto d = run_ob({"doctor"}, {}, {{"OFFLOAD_BUILD_LLVM", root.string()}});
  INFO(d.out);
  CHECK_THAT(d.out, Catch::Contains("clang-offload-packager"));
  CHECK_THAT(d.out, Catch::Contains("16 archs, sm_35 .. sm_90, in " + (root / "lib").string()));
  CHECK_THAT(d.out, Catch::Contains("nvptx64: full OpenMP offload"));
  CHECK_THAT(d.out, Catch::Contains(root.string() + "  GPU device runtime: nvptx64-nvidia-cuda, amdgcn-amd-amdhsa"));
  // LLVM 22 compiles a generic region for sm_90 that needs a runtime it has not: the error says where one is.
  TempDir tmp;
  const fs::path dir = project_with("saxpy-c", tmp, "/usr/lib/llvm-22", {"sm_90"});
  auto r = build_project(dir, {}, {"--no-cache"});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("LLVM 19 does (scripts/setup.sh --llvm 19 unpacks it"));
}

TEST_CASE("CMake package with LLVM 19 as CMAKE_<LANG>_COMPILER: generic kernels for host, sm_90, gfx90a, cached",
          "[integration][llvm19][cmake]") {
  OB_LLVM19(root);
  if (!has_cuda()) OB_SKIP("no CUDA ptxas at /usr/local/cuda (the sm_90 device link)");
  TempDir tmp;
  // What the package asks offload-build: the options clang 19 needs for its runtime.
  auto flags = run_ob({"runtime-flags", "--compiler", (root / "bin/clang").string(), "host", "sm_90", "gfx90a"});
  INFO(flags.err);
  REQUIRE(flags.exit_code == 0);
  CHECK(nlohmann::json::parse(flags.out)["compile"][0] == "--libomptarget-nvptx-bc-path=" + (root / "lib").string());
  CHECK(run_ob({"runtime-flags", "--compiler", std::string(kLlvmBin) + "/clang", "sm_90"}).out == "{\"compile\":[]}\n");
  CHECK(run_ob({"runtime-flags", "--compiler", std::string(kLlvmBin) + "/clang", "sm_9"}).exit_code == 2);

  const fs::path prefix = tmp / "prefix", cache = tmp / "cache";
  auto install = run_tool({"cmake", "--install", fs::path(OB_BINARY).parent_path().string(), "--prefix", prefix.string()});
  REQUIRE(install.exit_code == 0);
  const fs::path src = copy_example("cmake-project", tmp.path());
  const Env env{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"MAKEFLAGS", std::nullopt},
                {"CMAKE_GENERATOR", std::nullopt},
                {"PATH", std::string("/usr/local/cuda/bin:") + std::getenv("PATH")}};
  auto build_in = [&](const fs::path& build) {
    auto c = run_tool({"cmake", "-S", src.string(), "-B", build.string(), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                       "-DCMAKE_PREFIX_PATH=" + prefix.string(), "-DCMAKE_C_COMPILER=" + (root / "bin/clang").string(),
                       "-DCMAKE_CXX_COMPILER=" + (root / "bin/clang++").string(), "-DOFFLOAD_TARGETS=host;sm_90;gfx90a"},
                      {}, env);
    INFO(c.out << c.err);
    REQUIRE(c.exit_code == 0);
    auto b = run_tool({"cmake", "--build", build.string()}, {}, env);
    INFO(b.out << b.err);
    REQUIRE(b.exit_code == 0);
  };
  build_in(tmp / "b1");
  auto cold = cache_stats(cache);
  CHECK(cold["unchanged_by_reason"].empty());  // every offload compile split
  CHECK(cold["misses"].get<int>() > 0);
  auto listing = run_tool({(root / "bin/llvm-objdump").string(), "--offloading", (tmp / "b1/vecdemo").string()});
  CHECK(count_occurrences(listing.out, "OFFLOADING IMAGE") == 3);
  auto run = run_tool({(tmp / "b1/vecdemo").string()}, tmp / "b1",
                      {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"},
                       {"LD_LIBRARY_PATH", (root / "lib").string()}});
  INFO(run.err);
  CHECK(run.out == "vecdemo: y[7]=15.0 dot=131072.0 out[1]=1.0 device=1 bad=0 OK\n");
  // A second build directory: every compile from the cache.
  build_in(tmp / "b2");
  auto warm = cache_stats(cache);
  CHECK(warm["misses"] == cold["misses"]);
  CHECK(warm["hits"].get<int>() > cold["hits"].get<int>());
}

TEST_CASE("LLVM 16 from a private prefix: generic kernels for host and sm_90 link and run, and gfx90a needs ROCm",
          "[integration][llvm16]") {
  OB_LLVM16(root);
  // Its AMD bitcode is no runtime without ROCm's libraries: doctor does not count it.
  if (!fs::exists("/opt/rocm/amdgcn/bitcode/ocml.bc")) {
    auto d = run_ob({"doctor"}, {}, {{"OFFLOAD_BUILD_LLVM", root.string()}});
    INFO(d.out);
    CHECK_THAT(d.out, Catch::Contains(root.string() + "  GPU device runtime: nvptx64-nvidia-cuda\n"));
  }
  if (!has_cuda()) OB_SKIP("no CUDA ptxas at /usr/local/cuda (the sm_90 device link)");
  TempDir tmp;
  const fs::path dir = project_with("saxpy-c", tmp, root, {"host", "sm_90"});
  auto r = run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "run", "--verify"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n");
  CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch on device 0"));
  auto listing = run_tool({(root / "bin/llvm-objdump").string(), "--offloading", (dir / "build/saxpy").string()});
  CHECK_THAT(listing.out, Catch::Contains("arch            sm_90\ntriple          nvptx64-nvidia-cuda"));
  CHECK(count_occurrences(run_tool({"readelf", "-d", (dir / "build/saxpy").string()}).out, "libomptarget.so.16") == 1);
  // LLVM 16's AMD runtime is bitcode its driver links only with ROCm's
  // device libraries: without them a generic region is refused, by name.
  if (fs::exists("/opt/rocm/amdgcn/bitcode/ocml.bc")) return;
  TempDir other;
  const fs::path amd = project_with("saxpy-c", other, root, {"gfx90a"});
  auto refused = build_project(amd, {}, {"--no-cache"});
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.err, Catch::Contains("needs the OpenMP device runtime"));
}
