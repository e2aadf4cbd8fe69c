// Stable kernel names (docs/CACHE.md): the same bytes at the same place give
// the same OpenMP kernel names in any checkout; different regions of one
// program never share a name; where the preloaded library cannot help (a
// compiler that ignores it, an id collision) the cache falls back to inodes or
// stores nothing, and the program is still right.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;
using Argv = std::vector<std::string>;

namespace {

const std::string kClang = "/usr/bin/clang-22";
const std::string kHost = "-fopenmp-targets=x86_64-unknown-linux-gnu";
const Env kMandatory{{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"}};

// One project's kernel: a static function `bump` with a target region at
// line 4, whatever the project; only the increment differs.
std::string kernel_source(const std::string& entry, int increment) {
  return "void " + entry + "(int *x, int n);\n"
         "static void bump(int *x, int n) {\n"
         "#pragma omp target teams distribute parallel for map(tofrom: x[0:n])\n"
         "  for (int i = 0; i < n; ++i) x[i] += " + std::to_string(increment) + ";\n"
         "}\n"
         "void " + entry + "(int *x, int n) { bump(x, n); }\n";
}

process::Captured checked(const process::Captured& r) {
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

}  // namespace

TEST_CASE("two projects with the same layout link into one program with distinct kernels",
          "[integration][stable-names]") {
  TempDir tmp{"ob-stable"};
  const fs::path cache = tmp / "cache";
  // p1/src/k.c and p2/src/k.c: the same relative path, the same flags, the
  // same function and line for the region; each project compiled with its
  // own base directory and namespace (the CMake package passes PROJECT_NAME).
  for (auto [project, inc] : {std::pair{"p1", 1}, std::pair{"p2", 10}}) {
    write_file(tmp / project / "src/k.c", kernel_source(std::string(project) + "_entry", inc));
    fs::create_directories(tmp / project / "build");
    checked(run_ob({"--base-dir", (tmp / project).string(), "--kernel-namespace", project, "wrap", "--",
                    kClang, "-O2", "-fopenmp", kHost, "-c", "../src/k.c", "-o", "k.o"},
                   tmp / project / "build", {{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}}));
  }
  write_file(tmp / "main.c",
             "#include <stdio.h>\n"
             "void p1_entry(int *x, int n);\nvoid p2_entry(int *x, int n);\n"
             "int main(void) {\n  int a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};\n"
             "  p1_entry(a, 4);\n  p2_entry(b, 4);\n"
             "  printf(\"a=%d b=%d\\n\", a[3], b[3]);\n  return a[3] == 1 && b[3] == 10 ? 0 : 1;\n}\n");
  checked(run_tool({kClang, "-O2", "-fopenmp", kHost, "main.c", "p1/build/k.o", "p2/build/k.o", "-o", "prog"},
                   tmp.path()));
  auto r = run_tool({(tmp / "prog").string()}, tmp.path(), kMandatory);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "a=1 b=10\n");
  CHECK(count_occurrences(r.err, "Launching kernel __omp_offloading_b5d") == 2);
}

TEST_CASE("a compiler that ignores the preloaded library falls back to inode keys, visibly",
          "[integration][stable-names]") {
  TempDir tmp{"ob-stable"};
  const fs::path dir = copy_example("saxpy-c", tmp.path());
  // A toolchain whose clang drops LD_PRELOAD, as a static or setuid one would.
  use_wrapped_clang(dir, tmp / "llvm", [](const std::string& tool) {
    return std::string("#!/bin/sh\nunset LD_PRELOAD\nexec ") + kLlvmBin + "/" + tool + " \"$@\"\n";
  });
  const Argv build{"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "--explain", "build"};
  checked(run_ob(build));
  // The same bytes under a new inode: kernel names would change, so it misses.
  write_file(dir / "saxpy.c.new", read_file(dir / "saxpy.c"));
  fs::rename(dir / "saxpy.c.new", dir / "saxpy.c");
  auto r = checked(run_ob(build));
  CHECK_THAT(r.err, Catch::Contains("saxpy.c: miss: file replaced by a copy (new inode"));
  CHECK_THAT(r.err, Catch::Contains("ignores LD_PRELOAD"));
  auto p = run_tool({(dir / "build/saxpy").string()}, dir, kMandatory);
  CHECK(p.exit_code == 0);
  CHECK_THAT(p.out, Catch::Contains("max_err=0 OK"));
}

TEST_CASE("an id collision is never stored: the job runs again and the program is right",
          "[integration][stable-names]") {
  TempDir tmp{"ob-stable"};
  const fs::path dir = tmp / "proj";
  // a/defs.h and b/defs.h each hold a target region; the test hook gives ids
  // from base names alone, so the second header collides with the first and
  // keeps its inode (its kernel is named after it).
  for (auto [sub, inc] : {std::pair{"a", 1}, std::pair{"b", 10}})
    write_file(dir / sub / "defs.h",
               std::string("static void bump_") + sub + "(int *x) {\n#pragma omp target map(tofrom: x[0:1])\n"
               "  x[0] += " + std::to_string(inc) + ";\n}\n");
  write_file(dir / "main.c",
             "#include <stdio.h>\n#include \"a/defs.h\"\n#include \"b/defs.h\"\n"
             "int main(void) {\n  int v = 0;\n  bump_a(&v);\n  bump_b(&v);\n"
             "  printf(\"v=%d\\n\", v);\n  return v == 11 ? 0 : 1;\n}\n");
  write_file(dir / "offload.json",
             R"({"name": "collide", "output": "collide", "sources": ["main.c"], "targets": ["host"]})");
  const Argv build{"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "build"};
  const Env hook{{"OFFLOAD_BUILD_STABLE_TEST_BASENAME", "1"}};
  checked(run_ob(build, {}, hook));
  auto stats = nlohmann::json::parse(
      checked(run_ob({"--cache-dir", (tmp / "cache").string(), "cache", "stats", "--json"})).out);
  CHECK(stats["misses_by_reason"]["kernel names from inodes"].get<int>() >= 1);
  auto p = run_tool({(dir / "build/collide").string()}, dir, kMandatory);
  INFO(p.err);
  CHECK(p.exit_code == 0);
  CHECK(p.out == "v=11\n");
  CHECK(count_occurrences(p.err, "Launching kernel __omp_offloading_b5d") == 1);  // a/defs.h
  CHECK(count_occurrences(p.err, "Launching kernel __omp_offloading_") == 2);
  // A clean rebuild cannot be served the jobs whose outputs name inodes.
  fs::remove_all(dir / "build");
  auto again = checked(run_ob({"-C", dir.string(), "--cache-dir", (tmp / "cache").string(), "--explain", "build"},
                              {}, hook));
  CHECK_THAT(again.err, Catch::Contains("host-ir main.c: miss"));
  auto p2 = run_tool({(dir / "build/collide").string()}, dir, kMandatory);
  CHECK(p2.out == "v=11\n");
}

TEST_CASE("launcher: a second checkout at another path hits every compile and the link",
          "[integration][stable-names][launcher]") {
  TempDir tmp{"ob-stable"};
  const fs::path cache = tmp / "cache";
  std::string objects[2], programs[2], depfiles[2];
  for (int i = 0; i < 2; ++i) {
    const fs::path root = tmp / ("checkout" + std::to_string(i));
    fs::create_directories(root / "build");
    fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", root / "saxpy.c");
    const Env env{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"OFFLOAD_BUILD_BASE_DIR", root.string()},
                  {"OFFLOAD_BUILD_EXPLAIN", "1"}};
    // As CMake writes them: absolute source, relative object and depfile.
    auto c = checked(run_ob({kClang, "-O2", "-fopenmp", kHost, "-MD", "-MT", "saxpy.o", "-MF", "saxpy.o.d",
                             "-c", (root / "saxpy.c").string(), "-o", "saxpy.o"},
                            root / "build", env));
    auto l = checked(run_ob({kClang, "-fopenmp", kHost, "saxpy.o", "-o", (root / "build/saxpy").string(), "-lm"},
                            root / "build", env));
    if (i == 1) {
      CHECK(count_occurrences(c.err, ": hit") == 4);
      CHECK(count_occurrences(c.err, ": miss") == 0);
      CHECK_THAT(l.err, Catch::Contains("link saxpy: hit"));
    }
    objects[i] = read_file(root / "build/saxpy.o");
    depfiles[i] = read_file(root / "build/saxpy.o.d");
    programs[i] = read_file(root / "build/saxpy");
    auto p = run_tool({(root / "build/saxpy").string()}, root, kMandatory);
    CHECK_THAT(p.out, Catch::Contains("max_err=0 OK"));
    CHECK(count_occurrences(p.err, "Launching kernel __omp_offloading_b5d") == 1);
  }
  CHECK(objects[0] == objects[1]);
  CHECK(programs[0] == programs[1]);
  // The source was passed relative to the build directory, so the depfile
  // names it so: right for either checkout.
  CHECK(depfiles[0] == depfiles[1]);
  CHECK_THAT(depfiles[1], Catch::StartsWith("saxpy.o: ../saxpy.c"));
}

TEST_CASE("launcher: every project file is keyed by content, wherever it lies",
          "[integration][stable-names][launcher]") {
  TempDir tmp{"ob-stable"};
  const fs::path src = tmp / "src", build = tmp / "build";
  // An out-of-source build: the header lies outside the build directory, and
  // a generated header inside it.
  write_file(src / "include/msg.h", "#define MSG \"old\"\n");
  write_file(build / "gen/config.h", "#define SCALE 2\n");
  write_file(src / "main.c",
             "#include <stdio.h>\n#include \"msg.h\"\n#include \"config.h\"\n"
             "int main(void) {\n  int v = 1;\n#pragma omp target map(tofrom: v)\n  v *= SCALE;\n"
             "  printf(\"%s %d\\n\", MSG, v);\n  return 0;\n}\n");
  const Env env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()}, {"OFFLOAD_BUILD_EXPLAIN", "1"}};
  auto compile_and_run = [&] {
    auto c = checked(run_ob({kClang, "-fopenmp", kHost, "-I" + (src / "include").string(), "-Igen", "-c",
                             (src / "main.c").string(), "-o", "main.o"},
                            build, env));
    checked(run_ob({kClang, "-fopenmp", kHost, "main.o", "-o", "prog"}, build, env));
    auto p = run_tool({(build / "prog").string()}, build, kMandatory);
    INFO(p.err);
    CHECK(p.exit_code == 0);
    return std::pair{c.err, p.out};
  };
  CHECK(compile_and_run().second == "old 2\n");

  SECTION("a header rewritten in place with the same size and mtime is not served stale") {
    const auto mtime = fs::last_write_time(src / "include/msg.h");
    write_file(src / "include/msg.h", "#define MSG \"new\"\n");
    fs::last_write_time(src / "include/msg.h", mtime);
    auto [err, out] = compile_and_run();
    CHECK_THAT(err, Catch::Contains("host-ir ") && Catch::Contains(": miss: "));
    CHECK(out == "new 2\n");
  }
  SECTION("a touch, or a generated header regenerated with the same bytes, is served") {
    fs::last_write_time(src / "include/msg.h", fs::file_time_type::clock::now());
    write_file(build / "gen/config.h.tmp", "#define SCALE 2\n");
    fs::rename(build / "gen/config.h.tmp", build / "gen/config.h");
    auto [err, out] = compile_and_run();
    CHECK(count_occurrences(err, ": miss") == 0);
    CHECK(count_occurrences(err, ": hit") == 4);  // host-ir, device, package, host
    CHECK(out == "old 2\n");
  }
}

TEST_CASE("a #pragma once header reached through a hard link after 9000 others is included once",
          "[integration][stable-names][launcher][many-files]") {
  // The library remembers each real file's identity; its table used to stop
  // at 8192 files, after which a hard link to a header got a second identity
  // and `#pragma once` let it in twice ("redefinition of 'once_t'").
  TempDir tmp{"ob-stable"};
  const fs::path dir = tmp / "proj";
  constexpr int kHeaders = 9000;
  std::string includes;
  for (int i = 0; i < kHeaders; ++i) {
    const std::string name = "many/h" + std::to_string(i) + ".h";
    write_file(dir / name, "#define H" + std::to_string(i) + " " + std::to_string(i) + "\n");
    includes += "#include \"" + name + "\"\n";
  }
  write_file(dir / "once.h", "#pragma once\nstruct once_t { int v; };\n");
  fs::create_hard_link(dir / "once.h", dir / "linked.h");
  write_file(dir / "main.c", includes +
                                 "#include \"once.h\"\n#include \"linked.h\"\n#include <stdio.h>\n"
                                 "int main(void) {\n  struct once_t o = {H8999};\n"
                                 "#pragma omp target map(tofrom: o)\n  o.v += 1;\n"
                                 "  printf(\"v=%d\\n\", o.v);\n  return o.v == 9000 ? 0 : 1;\n}\n");
  // Plain clang agrees: the header is one file.
  checked(run_tool({kClang, "-fopenmp", kHost, "-fsyntax-only", "main.c"}, dir));
  const fs::path cache = tmp / "cache";
  auto stats = [&] {
    return nlohmann::json::parse(
        checked(run_ob({"--cache-dir", cache.string(), "cache", "stats", "--json"})).out);
  };

  SECTION("a manifest build") {
    write_file(dir / "offload.json",
               R"({"name": "many", "output": "many", "sources": ["main.c"], "targets": ["host"]})");
    checked(run_ob({"-C", dir.string(), "--cache-dir", cache.string(), "build"}));
    auto p = run_tool({(dir / "build/many").string()}, dir, kMandatory);
    INFO(p.err);
    CHECK(p.out == "v=9000\n");
    CHECK(stats()["stores"].get<int>() >= 3);
  }
  SECTION("launcher mode splits the compile (not run unchanged)") {
    const Env env{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"OFFLOAD_BUILD_EXPLAIN", "1"}};
    auto c = checked(run_ob({kClang, "-fopenmp", kHost, "-c", "main.c", "-o", "main.o"}, dir, env));
    CHECK_THAT(c.err, Catch::Contains("host-ir main.c: miss"));
    checked(run_ob({kClang, "-fopenmp", kHost, "main.o", "-o", "prog"}, dir, env));
    auto p = run_tool({(dir / "prog").string()}, dir, kMandatory);
    CHECK(p.out == "v=9000\n");
    auto s = stats();
    INFO(s.dump());
    CHECK(s["unchanged_by_reason"].empty());
    CHECK(s["stores"].get<int>() >= 3);
  }
}
