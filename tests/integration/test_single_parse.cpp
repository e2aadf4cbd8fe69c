// The single-parse C/C++ pipeline (one host parse per TU, shared by its
// device passes and the host codegen) against the driver's own two-parse
// device passes: every artifact must be the same bytes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// Every object, image, package and the program under build/, by path.
std::map<std::string, std::string> artifacts(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir / "build")) {
    if (!e.is_regular_file()) continue;
    const auto ext = e.path().extension();
    const bool program = e.path().parent_path() == dir / "build" && !e.path().has_extension();
    const bool product = ext == ".o" || ext == ".offload" || program;
    if (product) out[fs::relative(e.path(), dir).string()] = read_file(e.path());
  }
  return out;
}

std::map<std::string, std::string> build(const fs::path& dir, std::vector<std::string> extra,
                                         const std::string& expect_note) {
  std::vector<std::string> args{"-C", dir.string(), "--no-cache", "-v"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("build");
  fs::remove_all(dir / "build");
  auto r = run_ob(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains(expect_note));
  return artifacts(dir);
}

}  // namespace

TEST_CASE("single-parse output equals two-parse output, byte for byte", "[pipeline][single-parse]") {
  struct Case {
    const char* example;
    const char* program;
    std::vector<std::string> flags;  // replaces the manifest's "flags" when set
    size_t units;
    std::vector<std::string> targets = {};  // replaces the manifest's "targets" when set
  };
  const Case cases[] = {
      {"saxpy-c", "saxpy", {}, 1},
      {"vector-cxx", "vector", {}, 3},                             // C++, -I, -D, 3 TUs
      {"bare-gpu", "bare", {}, 1},                                 // host, sm_90 (ptxas), gfx90a
      {"bare-gpu", "bare", {"-O2", "-g"}, 1},                      // debug info names the source
      {"vector-cxx", "vector", {"-O1", "-std=c++17", "-g", "-Wall"}, 3},
      {"bare-gpu", "bare", {"-O3", "-ffast-math", "-march=x86-64-v3", "-fPIC", "-DUNUSED=1"}, 1},
      // two archs of one triple each: one probe per target, five images
      {"bare-gpu", "bare", {}, 1, {"host", "sm_80", "sm_90", "gfx90a", "gfx942"}},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.example << (c.flags.empty() ? "" : " with other flags")
                              << (c.targets.empty() ? "" : " for five targets")) {
      TempDir tmp;
      const fs::path dir = copy_example(c.example, tmp.path());
      auto m = nlohmann::json::parse(read_file(dir / "offload.json"));
      if (!c.flags.empty()) m["flags"] = c.flags;
      if (!c.targets.empty()) m["targets"] = c.targets;
      write_file(dir / "offload.json", m.dump());
      const std::string n = std::to_string(c.units);
      const auto single = build(dir, {}, "single-parse C/C++ pipeline for " + n + " of " + n);
      const auto two = build(dir, {"--two-parse"}, "two-parse C/C++ pipeline for every translation unit");

      // The same objects, images, packages and program (single parse also
      // leaves its host IR and PTX, which are not compared).
      std::vector<std::string> single_names, two_names;
      for (const auto& [name, bytes] : single) single_names.push_back(name);
      for (const auto& [name, bytes] : two) two_names.push_back(name);
      CHECK(single_names == two_names);
      CHECK(single.count("build/" + std::string(c.program)) == 1);
      for (const auto& [name, bytes] : two) {
        INFO(name);
        REQUIRE(single.count(name));
        CHECK(single.at(name) == bytes);
      }
    }
  }
}

TEST_CASE("a single-parse build runs its kernels on the host device", "[pipeline][single-parse]") {
  TempDir tmp;
  const fs::path dir = copy_example("bare-gpu", tmp.path());
  auto r = run_ob({"-C", dir.string(), "--no-cache", "-v", "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "-fopenmp-host-ir-file-path build/obj/bare.c.host.bc") == 3);
  CHECK_THAT(r.err, Catch::Contains("/ptxas") && Catch::Contains("build/obj/bare.c.dev.sm_90.s"));
  auto listing = run_tool({std::string(kLlvmBin) + "/llvm-objdump", "--offloading", (dir / "build/bare").string()});
  CHECK_THAT(listing.out, Catch::Contains("sm_90") && Catch::Contains("gfx90a") &&
                              Catch::Contains("x86_64-unknown-linux-gnu"));
  auto run = run_tool({(dir / "build/bare").string()}, dir,
                      {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"}});
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Catch::Contains("Launching kernel __omp_offloading_"));
}

// clang's own one-shot compile parses once for the host under -flto too (it
// emits the host IR, then LTO bitcode from it), so single parse gives its
// bytes and the two-parse host pass, a one-step compile from the source, does not.
TEST_CASE("with -flto a TU takes the single-parse layout, as clang does, and its program runs",
          "[pipeline][single-parse]") {
  TempDir tmp;
  const fs::path dir = copy_example("saxpy-c", tmp.path());
  auto m = nlohmann::json::parse(read_file(dir / "offload.json"));
  m["flags"] = {"-O2", "-flto"};
  write_file(dir / "offload.json", m.dump());
  auto r = run_ob({"-C", dir.string(), "--no-cache", "-v", "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("single-parse C/C++ pipeline for 1 of 1"));
  // Stable kernel names: clang given the same preloaded library names kernels alike.
  const Env names = stable_names_env(run_ob({"-C", dir.string(), "--dry-run", "build"}).out);
  REQUIRE(names.size() == 4);
  auto ref = run_tool({std::string(kLlvmBin) + "/clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                       "-O2", "-flto", "-c", "saxpy.c", "-o", "ref.o"}, dir, names);
  REQUIRE(ref.exit_code == 0);
  CHECK(read_file(dir / "build/obj/saxpy.c.host.o") == read_file(dir / "ref.o"));
  auto run = run_tool({(dir / "build/saxpy").string()}, dir, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("OK"));
  // The documented exception: --two-parse's host pass compiles the source in
  // one step and writes other LTO bitcode (docs/LAUNCHER.md, Equivalence).
  auto two = run_ob({"-C", dir.string(), "--no-cache", "--two-parse", "build"});
  REQUIRE(two.exit_code == 0);
  CHECK(read_file(dir / "build/obj/saxpy.c.host.o") != read_file(dir / "ref.o"));
  auto run_two = run_tool({(dir / "build/saxpy").string()}, dir, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
  CHECK(run_two.exit_code == 0);
}
