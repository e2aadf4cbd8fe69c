// Launcher mode with a fake compiler (a shell script in a fake LLVM tree):
// pass-through is byte-identical to calling the compiler, and under
// `make -jN` the number of compilers running at once never exceeds N.
#include <catch2/catch.hpp>

#include <algorithm>

#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;
using Argv = std::vector<std::string>;

namespace {

// <tmp>/llvm/bin/clang is `script`; the other tools it needs are the real ones.
struct FakeLlvm {
  TempDir tmp{"ob-fake-llvm"};
  fs::path bin = tmp / "llvm/bin";
  fs::path clang = bin / "clang";

  explicit FakeLlvm(const std::string& script) {
    fs::create_directories(bin);
    write_file(clang, "#!/bin/sh\n" + script);
    fs::permissions(clang, fs::perms::owner_all);
    fs::create_symlink("clang", bin / "clang++");
    for (const char* tool : {"llvm-offload-binary", "clang-linker-wrapper"})
      fs::create_symlink(std::string(kLlvmBin) + "/" + tool, bin / tool);
  }
  Env env(Env more = {}) const {
    Env e{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()},
          {"OFFLOAD_BUILD_NO_CACHE", "1"},
          {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
          {"MAKEFLAGS", std::nullopt},
          {"MFLAGS", std::nullopt}};
    e.insert(e.end(), more.begin(), more.end());
    return e;
  }
};

// The fake compilers' concurrency.log in `runs`: one line per pass, how many
// passes ran when it started.
struct Concurrency {
  int most = 0;
  size_t passes = 0;
};
Concurrency read_concurrency(const fs::path& runs) {
  Concurrency c;
  for (const auto& line : util::split(read_file(runs / "concurrency.log"), '\n')) {
    if (util::trim(line).empty()) continue;
    c.most = std::max(c.most, std::stoi(util::trim(line)));
    ++c.passes;
  }
  return c;
}

}  // namespace

TEST_CASE("pass-through: exit code, stdout and stderr are the compiler's", "[launcher][integration]") {
  FakeLlvm llvm(
      "printf 'out: %s\\n' \"$*\"\n"
      "printf 'err line\\n\\001binary, no newline' >&2\n"
      "case \"$*\" in *signal*) kill -TERM $$;; esac\n"
      "exit 7\n");
  const std::string cc = llvm.clang.string();
  for (const Argv& args : {Argv{"-c", "x.c", "-o", "x.o"},                                // no offload flags
                           Argv{"-fopenmp", "--offload-arch=sm_90", "x.o", "-o", "app"},  // a link
                           Argv{"-fopenmp", "--offload-arch=sm_90", "-E", "x.c"},         // preprocessing
                           Argv{"-fopenmp", "--offload-arch=sm_90", "-c", "x.c", "--weird"},  // unknown
                           Argv{"-c", "x.c", "signal"}}) {                                // killed
    Argv cmd{cc};
    cmd.insert(cmd.end(), args.begin(), args.end());
    INFO(util::shell_join(cmd));
    auto direct = run_tool(cmd, llvm.tmp.path(), llvm.env());
    Argv via{OB_BINARY};
    via.insert(via.end(), cmd.begin(), cmd.end());
    auto launched = run_tool(via, llvm.tmp.path(), llvm.env());
    CHECK(launched.exit_code == direct.exit_code);
    CHECK(launched.out == direct.out);
    CHECK(launched.err == direct.err);
    CHECK((direct.exit_code == 7 || direct.exit_code == 128 + 15));
  }
}

// A fake compiler whose every pass records how many passes run right now.
// It answers no -### listing (so the compiles keep the two-parse form) and,
// as clang does, writes the depfile -MF names beside the object.
const char* const kCountingCompiler =
    "for a; do [ \"$a\" = '-###' ] && exit 1; done\n"
    "d=\"$(dirname \"$0\")/../../runs\"\n"
    "touch \"$d/running/$$\"\n"
    "ls \"$d/running\" | wc -l >> \"$d/concurrency.log\"\n"
    "sleep 0.2\n"
    "out=; dep=; prev=\n"
    "for a in \"$@\"; do\n"
    "  case \"$prev\" in -o) out=\"$a\";; -MF) dep=\"$a\";; esac\n"
    "  prev=\"$a\"\n"
    "done\n"
    "[ -n \"$out\" ] && printf 'fake object\\n' > \"$out\"\n"
    "[ -n \"$dep\" ] && printf '%s:\\n' \"$out\" > \"$dep\"\n"
    "rm -f \"$d/running/$$\"\n";

TEST_CASE("make -jN: the jobserver bounds the compilers running at once", "[launcher][integration]") {
  FakeLlvm llvm(kCountingCompiler);
  const fs::path runs = llvm.tmp / "runs";
  // Four offload compiles with four device targets each: 20 compiler passes.
  auto make = [&](const std::string& recipe_prefix) {
    fs::remove_all(runs);
    fs::create_directories(runs / "running");
    std::string mk = "all: o1.o o2.o o3.o o4.o\no%.o: s%.c\n\t" + recipe_prefix + " " +
                     util::shell_quote(OB_BINARY) + " " + util::shell_quote(llvm.clang.string()) +
                     " -fopenmp --offload-arch=sm_80,sm_90,gfx90a,gfx942 -c $< -o $@\n";
    write_file(llvm.tmp / "Makefile", mk);
    for (int i = 1; i <= 4; ++i) {
      write_file(llvm.tmp / ("s" + std::to_string(i) + ".c"), "int x;\n");
      fs::remove(llvm.tmp / ("o" + std::to_string(i) + ".o"));
    }
    // Without make's limit each launcher would run its 4 device passes at once.
    auto r = run_tool({"make", "-j3", "-s"}, llvm.tmp.path(), llvm.env({{"OFFLOAD_BUILD_JOBS", "8"}}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (int i = 1; i <= 4; ++i) CHECK(read_file(llvm.tmp / ("o" + std::to_string(i) + ".o")) == "fake object\n");
    const Concurrency c = read_concurrency(runs);
    CHECK(c.passes == 20);
    return c.most;
  };
  SECTION("recipes make passes the jobserver to ('+'): tokens for extra passes") {
    int most = make("+");
    CHECK(most <= 3);
    CHECK(most >= 2);
  }
  SECTION("recipes without the jobserver's descriptors: one pass per launcher") {
    CHECK(make("") <= 3);
  }
  SECTION("control: without MAKEFLAGS the launchers overrun make's limit") {
    CHECK(make("MAKEFLAGS=") > 3);
  }
}

// `offload-build build` in a make recipe: the same bounds as the launcher.
TEST_CASE("make -jN: a build in a recipe shares make's job slots", "[launcher][jobserver][integration]") {
  FakeLlvm llvm(kCountingCompiler);
  for (const char* tool : {"llvm-offload-binary", "clang-linker-wrapper"}) {
    fs::remove(llvm.bin / tool);
    fs::copy_file(llvm.clang, llvm.bin / tool);
  }
  const fs::path proj = llvm.tmp / "proj";
  for (int i = 1; i <= 4; ++i) write_file(proj / ("s" + std::to_string(i) + ".c"), "int x;\n");
  write_file(proj / "offload.json", R"({"name": "p", "sources": ["*.c"], "targets": ["host"], "toolchain": ")" +
                                        (llvm.tmp / "llvm").string() + "\"}");
  const fs::path runs = llvm.tmp / "runs";
  auto most_at_once = [&](const std::string& recipe_prefix) {
    fs::remove_all(runs);
    fs::remove_all(proj / "build");
    fs::create_directories(runs / "running");
    write_file(llvm.tmp / "Makefile", "all:\n\t" + recipe_prefix + " " + util::shell_quote(OB_BINARY) +
                                          " -C proj --no-cache -j8 build\n");
    auto r = run_tool({"make", "-j2", "-s"}, llvm.tmp.path(), llvm.env());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return read_concurrency(runs).most;
  };
  SECTION("with the jobserver's descriptors ('+'): make's 2 slots") { CHECK(most_at_once("+") == 2); }
  SECTION("without them: one job at a time") { CHECK(most_at_once("") == 1); }
}
