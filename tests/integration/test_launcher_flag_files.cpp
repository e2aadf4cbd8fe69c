// Files named by options, and what the driver reads besides its argv, in a
// launcher compile's key (docs/LAUNCHER.md, "Files named by options"): a
// profile edited is never served from the cache, a bad one fails as the
// compiler fails; a --config file's arguments are the compile's.
#include <catch2/catch.hpp>

#include "integration/launcher_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kSource = kWorkKernel + R"(int hot(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 0) s += i * 7;
    else s -= i;
  }
  return s;
}
int cold(int n) { return n * 3 + 1; }
)";
// Two sample profiles that give the host code other bytes (a hot `hot` or a hot `cold`).
const char* kProfileA = "hot:10000:1\n 1: 1000\n 3: 1000\n 4: 900\n 5: 100\ncold:1:1\n 1: 1\n";
const char* kProfileB = "hot:1:1\n 1: 1\ncold:100000:1000\n 1: 1000\n";

int counter(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }

}  // namespace

TEST_CASE("launcher: a file named by -fprofile-sample-use= is keyed by its content",
          "[launcher][flagkeys][integration]") {
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  write_file(l.tmp / "p.prof", kProfileA);
  const Argv compile{kClang, "-O2", "-fopenmp", kHostTargets, "-fprofile-sample-use=p.prof", "-c", "k.c", "-o", "k.o"};
  auto first = l.ob(compile);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string with_a = read_file(l.tmp / "k.o");
  auto again = l.ob(compile);
  REQUIRE(again.exit_code == 0);
  const auto warm = l.stats();
  CHECK(counter(warm, "hits") > 0);  // the same profile: served
  CHECK(read_file(l.tmp / "k.o") == with_a);

  // Another profile: compiled again, the bytes a compile without the cache gives.
  write_file(l.tmp / "p.prof", kProfileB);
  auto edited = l.ob(compile);
  INFO(edited.err);
  REQUIRE(edited.exit_code == 0);
  const std::string with_b = read_file(l.tmp / "k.o");
  const auto after = l.stats();
  CHECK(counter(after, "misses") > counter(warm, "misses"));  // the passes reading it ran again
  auto fresh = l.ob(concat({"--no-cache", "wrap", "--"}, compile));
  REQUIRE(fresh.exit_code == 0);
  CHECK(read_file(l.tmp / "k.o") == with_b);
  CHECK(with_b != with_a);

  // A profile clang cannot read: it fails as the compiler fails, no object served.
  write_file(l.tmp / "p.prof", std::string("\x01\x02garbage\xff\xfe", 11));
  auto alone = l.cc(concat({kClang, "-O2", "-fopenmp", kHostTargets, "-fprofile-sample-use=p.prof"},
                           {"-c", "k.c", "-o", "alone.o"}));
  CHECK(alone.exit_code == 1);
  fs::remove(l.tmp / "k.o");
  auto garbage = l.ob(compile);
  INFO(garbage.err);
  CHECK(garbage.exit_code == alone.exit_code);
  CHECK(garbage.err.find("p.prof") != std::string::npos);
  CHECK_FALSE(fs::exists(l.tmp / "k.o"));

  // A missing profile: the compile runs unchanged and the compiler says why.
  fs::remove(l.tmp / "p.prof");
  auto missing = l.ob(compile);
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("p.prof") != std::string::npos);
  CHECK(counter(l.stats()["unchanged_by_reason"], "missing directory or file") >= 1);
}

TEST_CASE("launcher: options that name what offload-build cannot key run the compile unchanged",
          "[launcher][flagkeys][integration]") {
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  fs::create_directories(l.tmp / "bin");
  for (const Argv& extra : std::vector<Argv>{{"-B", "bin"},
                                             {"-fprofile-use"},
                                             {"-fno-such-option-for-offload-build"},
                                             {"-Xclang", "-load", "-Xclang", "x.so"}}) {
    INFO(util::shell_join(extra));
    const auto before = l.stats();
    auto r = l.ob(concat(concat({kClang, "-O2", "-fopenmp", kHostTargets}, extra), {"-c", "k.c", "-o", "k.o"}),
                  {{"OFFLOAD_BUILD_VERBOSE", "1"}});
    const auto after = l.stats();
    CHECK(counter(after, "misses") == counter(before, "misses"));  // not split, nothing stored
    CHECK(counter(after["unchanged_by_reason"], "unsupported option") ==
          counter(before["unchanged_by_reason"], "unsupported option") + 1);
    CHECK(r.err.find("running the compiler unchanged") != std::string::npos);
  }
}

TEST_CASE("launcher: a --config file's arguments are the compile's, in its key",
          "[launcher][flagkeys][integration]") {
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  write_file(l.tmp / "offload.cfg", "# offload for the host device\n-fopenmp " + kHostTargets + "\n-O2\n");
  const Argv compile{kClang, "--config=" + (l.tmp / "offload.cfg").string(), "-c", "k.c", "-o", "k.o"};
  auto first = l.ob(compile);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const auto split = l.stats();
  CHECK(counter(split, "misses") > 0);  // split: the offload options are the file's
  CHECK(read_file(l.tmp / "k.o").find(".llvm.offloading") != std::string::npos);
  const std::string o2 = read_file(l.tmp / "k.o");
  // The file edited: not served; the bytes of the compiler alone.
  write_file(l.tmp / "offload.cfg", "-fopenmp " + kHostTargets + "\n-O0\n");
  auto edited = l.ob(compile);
  REQUIRE(edited.exit_code == 0);
  CHECK(counter(l.stats(), "hits") == counter(split, "hits"));
  CHECK(read_file(l.tmp / "k.o") != o2);
  auto fresh = l.ob(concat({"--no-cache", "wrap", "--"}, concat(compile, {"-o", "fresh.o"})));
  REQUIRE(fresh.exit_code == 0);
  CHECK(read_file(l.tmp / "fresh.o") == read_file(l.tmp / "k.o"));
}

TEST_CASE("launcher: CCC_OVERRIDE_OPTIONS makes the compile run unchanged",
          "[launcher][flagkeys][integration]") {
  Launcher l;
  write_file(l.tmp / "k.c", kSource);
  const Argv compile{kClang, "-O2", "-fopenmp", "-c", "k.c", "-o", "k.o"};
  auto r = l.ob(compile, {{"CCC_OVERRIDE_OPTIONS", "#+" + kHostTargets}, {"OFFLOAD_BUILD_VERBOSE", "1"}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("CCC_OVERRIDE_OPTIONS") != std::string::npos);
  CHECK(read_file(l.tmp / "k.o").find(".llvm.offloading") != std::string::npos);  // clang's own edit applied
  CHECK(counter(l.stats(), "misses") == 0);
}

// A manifest's flags are read by the same option table: a file they name is
// in the key of every pass that reads it, and the build state's check.
TEST_CASE("manifest: a file named by flags is keyed by its content, what cannot be keyed is not cached",
          "[manifest][flagkeys][integration]") {
  TempDir tmp("ob-flagfiles");
  const fs::path dir = tmp / "p", cache = tmp / "cache";
  write_file(dir / "k.c", kSource + "int main(void) { return work(10) == 12345; }\n");
  write_file(dir / "p.prof", kProfileA);
  auto manifest = [&](const std::string& flags) {
    write_file(dir / "offload.json",
               R"({"name": "pf", "sources": ["k.c"], "targets": ["host"], "flags": [)" + flags + "]}");
  };
  manifest(R"("-O2", "-fprofile-sample-use=p.prof")");
  auto build = [&](std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"-C", dir.string(), "--cache-dir", cache.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("build");
    return run_ob(args);
  };
  auto program = [&] { return read_file(dir / "build/pf"); };
  auto first = build();
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string with_a = program();
  CHECK_THAT(build().err, Catch::Contains(" jobs: 0 from cache, 0 run"));  // up to date

  // Another profile: the passes that read it run again, the bytes a build without the cache gives.
  write_file(dir / "p.prof", kProfileB);
  auto edited = build({"--explain"});
  INFO(edited.err);
  REQUIRE(edited.exit_code == 0);
  CHECK_THAT(edited.err, Catch::Contains("p.prof"));
  const std::string with_b = program();
  CHECK(with_b != with_a);
  fs::remove_all(dir / "build");
  REQUIRE(build({"--no-cache"}).exit_code == 0);
  CHECK(program() == with_b);
  CHECK(temp_outputs(dir / "build").empty());  // no record of lookups left behind either

  // The first profile again in a clean build directory: served, the first bytes.
  write_file(dir / "p.prof", kProfileA);
  fs::remove_all(dir / "build");
  auto served = build();
  REQUIRE(served.exit_code == 0);
  CHECK_THAT(served.err, Catch::Contains(" from cache, 0 run"));
  CHECK(program() == with_a);

  // A profile clang cannot read: the build fails as clang does, naming it.
  write_file(dir / "p.prof", std::string("\x01\x02garbage\xff\xfe", 11));
  auto garbage = build();
  CHECK(garbage.exit_code != 0);
  CHECK_THAT(garbage.err, Catch::Contains("p.prof"));

  // -B names programs offload-build cannot key: built, never cached, and --explain says why.
  manifest(R"("-O2", "-B", "/usr/lib/llvm-22/bin")");
  fs::remove_all(dir / "build");
  auto b1 = build({"--explain"});
  INFO(b1.err);
  REQUIRE(b1.exit_code == 0);
  CHECK_THAT(b1.err, Catch::Contains("not cached: offload.json flags: option -B"));
  fs::remove_all(dir / "build");
  auto b2 = build();
  REQUIRE(b2.exit_code == 0);
  CHECK_THAT(b2.err, !Catch::Contains(" from cache, 0 run"));
}

// A link reads what its argv names only inside options: the linker under a
// -B prefix (clang looks there first) and a response file handed to the
// linker in -Wl,@FILE. Either changed, the link is made again, never served.
TEST_CASE("launcher: a link is keyed by the linker a -B prefix holds and by a -Wl,@ response file",
          "[launcher][flagkeys][integration]") {
  Launcher l;
  write_file(l.tmp / "main.c",
             "#include <stdio.h>\nint value(void);\nint main(void) {\n  int d = 0;\n"
             "#pragma omp target map(from: d)\n  d = 1;\n  printf(\"%d %d\\n\", d, value());\n  return 0;\n}\n");
  for (const std::string v : {"11", "21"}) {
    write_file(l.tmp / ("v" + v + ".c"), "int value(void) { return " + v + "; }\n");
    REQUIRE(run_tool({kClang, "-c", "v" + v + ".c", "-o", "v" + v + ".o"}, l.tmp.path()).exit_code == 0);
  }
  REQUIRE(l.ob({kClang, "-fopenmp", kHostTargets, "-c", "main.c", "-o", "main.o"}).exit_code == 0);
  auto program = [&] { return run_tool({(l.tmp / "prog").string()}, l.tmp.path()).out; };
  auto relinked = [&](const Argv& link) {
    fs::remove(l.tmp / "prog");
    auto r = l.ob(link, {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.err;
  };
  SECTION("-Wl,@FILE") {
    const Argv link{kClang, "-fopenmp", kHostTargets, "main.o", "-Wl,@link.rsp", "-o", "prog"};
    write_file(l.tmp / "link.rsp", "v11.o\n");
    (void)relinked(link);
    CHECK(program() == "1 11\n");
    write_file(l.tmp / "link.rsp", "v21.o\n");
    CHECK_THAT(relinked(link), Catch::Contains("link prog: miss"));
    CHECK(program() == "1 21\n");
  }
  SECTION("-B DIR") {
    const Argv link{kClang, "-fopenmp", kHostTargets, "-B", "tools", "main.o", "-o", "prog"};
    auto linker = [&](const std::string& object) {
      write_file(l.tmp / "tools/ld", "#!/bin/sh\nexec /usr/bin/ld \"$@\" " + object + "\n");
      fs::permissions(l.tmp / "tools/ld", fs::perms::owner_all);
    };
    linker("v11.o");
    (void)relinked(link);
    CHECK(program() == "1 11\n");
    linker("v21.o");
    CHECK_THAT(relinked(link), Catch::Contains("link prog: miss"));
    CHECK(program() == "1 21\n");
  }
}
