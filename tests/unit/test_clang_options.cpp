// The launcher's one clang option table (clang_options.hpp): files named by
// options are keyed or refused, unknown options are refused; and what the
// driver reads besides its argv (--config files, the default ones,
// CCC_OVERRIDE_OPTIONS), for the parse and for prefix_command.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <set>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/clang_options.hpp"
#include "offload_build/util/strings.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::toolchain::clang_cli;
using Argv = std::vector<std::string>;

namespace {

const Argv kOffload{"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2"};

Parsed with(const Argv& extra) {
  Argv argv = kOffload;
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"-c", "k.c", "-o", "k.o"});
  return parse(argv);
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("options naming a file the compile reads are keyed by content", "[launcher][clang_cli][flagkeys]") {
  for (const std::string opt :
       {"-fprofile-sample-use=", "-fprofile-instr-use=", "-fprofile-use=", "-fpass-plugin=", "-fplugin=",
        "-fprofile-list=", "-fxray-attr-list=", "-fmemory-profile-use=", "-fsanitize-ignorelist=",
        "-fprofile-remapping-file=", "-fsanitize-coverage-allowlist="}) {
    INFO(opt);
    auto p = with({opt + "dir/p.file"});
    REQUIRE(p.compile);
    CHECK(p.compile->keyed_files == Argv{"dir/p.file"});
  }
  // Forwarded to one pass: still the compile's.
  auto x = with({"-Xarch_host", "-fprofile-sample-use=h.prof"});
  REQUIRE(x.compile);
  CHECK(x.compile->keyed_files == Argv{"h.prof"});
  auto c = with({"-Xclang", "-fprofile-list=l.txt"});
  REQUIRE(c.compile);
  CHECK(c.compile->keyed_files == Argv{"l.txt"});
  // -mllvm values may name files: the launcher checks them.
  auto m = with({"-mllvm", "-sample-profile-file=s.prof", "-mllvm=-inline-threshold=100"});
  REQUIRE(m.compile);
  CHECK(m.compile->maybe_files == Argv{"s.prof", "100"});
  // Paths never read are keyed as written; search directories through the depfile.
  auto t = with({"-fdebug-prefix-map=/a=/b", "-fcoverage-compilation-dir=/x", "-Iinc", "--sysroot=/s",
                 "--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12"});
  REQUIRE(t.compile);
  CHECK(t.compile->keyed_files.empty());
}

TEST_CASE("a device runtime bitcode path (libomptarget nvptx bc-path) goes to its family's device passes, keyed",
          "[launcher][clang_cli][flagkeys]") {
  const Argv file{"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                  "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90", "--libomptarget-nvptx-bc-path=rt/x.bc",
                  "-c", "k.c", "-o", "k.o"};
  auto p = toolchain::clang_cli::parse(file);
  REQUIRE(p.compile);
  CHECK(p.compile->keyed_files == Argv{"rt/x.bc"});
  bool seen = false;
  for (const auto& a : p.compile->args)
    if (a.kind == toolchain::frontend::ArgKind::DeviceFamily) {
      seen = true;
      CHECK(a.triple == "nvptx64-nvidia-cuda");
    }
  CHECK(seen);
}

TEST_CASE("options naming what cannot be keyed, and unknown options, run the compile unchanged",
          "[launcher][clang_cli][flagkeys]") {
  for (const Argv& extra : {Argv{"-B", "bin"}, Argv{"-Bbin"}, Argv{"--prefix=bin"}, Argv{"-resource-dir", "r"},
                            Argv{"-fprofile-use"}, Argv{"-fplugin-arg-x-y=z"}, Argv{"-fmodules"},
                            Argv{"-fmodule-file=m.pcm"}, Argv{"-include-pch", "p.pch"}, Argv{"-Wa,-I,dir"},
                            Argv{"-Xclang", "-load", "-Xclang", "x.so"}, Argv{"-Xclang=-load"},
                            Argv{"-Xarch_host", "-B", "x"}, Argv{"-Xarch_host", "-Bx"},
                            Argv{"-fno-such-flag"}, Argv{"-ffoo=bar"}, Argv{"-mno-such-flag"},
                            Argv{"--config=x.cfg"}, Argv{"-ftime-trace"}, Argv{"--some-new-option"}}) {
    INFO(util::shell_join(extra));
    auto p = with(extra);
    CHECK_FALSE(p.compile);
    CHECK(p.pass_code == unchanged::kOption);
  }
  // Every clang-22 -f/-m/-g flag is known; typical ones are keyed as written.
  for (const std::string flag : {"-fPIC", "-fno-exceptions", "-ffast-math", "-mavx2", "-g", "-gdwarf-5",
                                 "-fvisibility=hidden", "-march=native", "-std=c17", "-Wall", "-Wno-unused"}) {
    INFO(flag);
    CHECK(with({flag}).compile);
  }
}

TEST_CASE("the option table: every spelling once, refusals only by prefix", "[launcher][clang_cli][flagkeys]") {
  std::set<std::string_view> seen;
  for (const auto& o : option_table()) {
    INFO(o.spelling);
    CHECK(seen.insert(o.spelling).second);
    if (o.form == OptionForm::Prefix)
      CHECK((o.effect == OptionEffect::Unchanged || o.effect == OptionEffect::NotCompile));
    const auto found = find_option(o.spelling);
    REQUIRE(found);
    CHECK(found->spelling == o.spelling);
  }
  CHECK(std::is_sorted(clang22_flags().begin(), clang22_flags().end()));
  CHECK(find_option("-fprofile-use=p")->effect == OptionEffect::File);
  CHECK(find_option("-fprofile-use")->effect == OptionEffect::Unchanged);
  CHECK(find_option("-Wl,-rpath,x")->effect == OptionEffect::Text);
  CHECK(find_option("-Wa,-x")->effect == OptionEffect::Unchanged);
  CHECK(find_option("-fmodules-cache-path=x")->effect == OptionEffect::Unchanged);
  CHECK_FALSE(find_option("-fxyz-unknown"));
}

TEST_CASE("a --config file's arguments are the command line's, read as clang reads them",
          "[launcher][clang_cli][flagkeys]") {
  test::TempDir dir;
  const fs::path root = dir.path();
  fs::create_directories(root / "cfg" / "sub");
  write(root / "cfg" / "offload.cfg",
        "# a comment\n  # another\n-fopenmp \\\n  -fopenmp-targets=x86_64-unknown-linux-gnu\n"
        "@sub/more.rsp -I<CFGDIR>/inc\n$-lm\n");
  write(root / "cfg" / "sub" / "more.rsp", "-O2");
  DriverEnvironment env;
  env.binary_dirs = {root / "bin"};  // no .cfg there
  auto d = driver_argv({"clang", "--config", "cfg/offload.cfg", "-c", "k.c"}, dir.path(), env);
  REQUIRE(d);
  CHECK(d->doubt.empty());
  CHECK(d->argv == Argv{"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2",
                        "-I" + (root / "cfg").string() + "/inc", "-c", "k.c", "-lm"});
  CHECK(d->config_files == std::vector<fs::path>{root / "cfg" / "offload.cfg"});
  // Found by name in the binary's directory.
  fs::create_directories(root / "bin");
  write(root / "bin" / "named.conf", "-DNAMED");
  auto named = driver_argv({"clang", "--config=named.conf", "-c", "k.c"}, dir.path(), env);
  REQUIRE(named);
  CHECK(named->argv == Argv{"clang", "-DNAMED", "-c", "k.c"});
  // Missing, or naming another: the compiler reports it.
  std::string problem;
  CHECK_FALSE(driver_argv({"clang", "--config=nope.cfg", "-c", "k.c"}, dir.path(), env, &problem));
  CHECK(problem.find("nope.cfg") != std::string::npos);
  write(root / "nested.cfg", "--config=cfg/offload.cfg");
  CHECK_FALSE(driver_argv({"clang", "--config=./nested.cfg"}, dir.path(), env));
  // A default configuration file where clang looks: in doubt, unless turned off.
  write(root / "bin" / "clang.cfg", "-fopenmp");
  auto doubt = driver_argv({"clang", "-c", "k.c"}, dir.path(), env);
  REQUIRE(doubt);
  CHECK(doubt->doubt.find("clang.cfg") != std::string::npos);
  CHECK(driver_argv({"clang", "--no-default-config", "-c", "k.c"}, dir.path(), env)->doubt.empty());
  env.no_default_config = true;
  CHECK(driver_argv({"clang", "-c", "k.c"}, dir.path(), env)->doubt.empty());
  env.override_options = "+-O1";
  CHECK(driver_argv({"clang", "-c", "k.c"}, dir.path(), env)->doubt.find("CCC_OVERRIDE_OPTIONS") == 0);
}

TEST_CASE("a directory found without default configuration files is remembered by its mtime, never past a change",
          "[launcher][clang_cli][flagkeys]") {
  test::TempDir dir;
  const fs::path bin = dir.path() / "bin", memo = dir.path() / "probes";
  fs::create_directories(bin);
  write(bin / "clang.txt", "not a configuration file");
  DriverEnvironment env;
  env.binary_dirs = {bin};
  env.memo = memo;
  auto memo_files = [&] {
    size_t n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(memo, ec), end; !ec && it != end; it.increment(ec)) n += 1;
    return n;
  };
  // Modified just now: listed, not remembered (a file added in the same tick would go unseen).
  CHECK(driver_argv({"clang", "-c", "k.c"}, dir.path(), env)->doubt.empty());
  CHECK(memo_files() == 0);
  // Older: remembered, and the memo answers while the directory is unchanged.
  fs::last_write_time(bin, fs::file_time_type::clock::now() - std::chrono::hours(1));
  CHECK(driver_argv({"clang", "-c", "k.c"}, dir.path(), env)->doubt.empty());
  CHECK(memo_files() == 1);
  CHECK(driver_argv({"clang", "-c", "k.c"}, dir.path(), env)->doubt.empty());
  // A configuration file added changes the directory: the memo no longer answers.
  write(bin / "clang.cfg", "-fopenmp");
  auto doubt = driver_argv({"clang", "-c", "k.c"}, dir.path(), env);
  REQUIRE(doubt);
  CHECK(doubt->doubt.find("clang.cfg") != std::string::npos);
  // Set back to an old time (a copy that keeps times): another stamp, listed
  // again, and a directory with a *.cfg name is never remembered as without.
  fs::last_write_time(bin, fs::file_time_type::clock::now() - std::chrono::hours(2));
  CHECK(driver_argv({"clang", "-c", "k.c"}, dir.path(), env)->doubt.find("clang.cfg") != std::string::npos);
}

TEST_CASE("CCC_OVERRIDE_OPTIONS edits as clang edits, rewrites are not modeled", "[launcher][clang_cli][flagkeys]") {
  const Argv argv{"clang", "-O2", "-c", "k.c", "-o", "k.o"};
  CHECK(apply_override_options(argv, "#+-fopenmp ^-DX") ==
        Argv{"clang", "-DX", "-O2", "-c", "k.c", "-o", "k.o", "-fopenmp"});
  CHECK(apply_override_options(argv, "x-O2 X-o") == Argv{"clang", "-c", "k.c"});
  CHECK_FALSE(apply_override_options(argv, "s/-O2/-O3/"));
  CHECK_FALSE(apply_override_options(argv, "O0"));
}

TEST_CASE("offload_free looks inside joined forwarding options", "[launcher][prefix][flagkeys]") {
  CHECK_FALSE(offload_free({"clang", "-Xclang=-fopenmp-is-target-device", "-c", "k.c"}));
  CHECK_FALSE(offload_free({"clang", "-Xclang=-fembed-offload-object=x", "-c", "k.c"}));
  CHECK_FALSE(offload_free({"clang", "-Wp,-fopenmp-targets=x", "-c", "k.c"}));
  CHECK(offload_free({"clang", "-Wl,--as-needed", "-DX=1", "-c", "k.c"}));
}
