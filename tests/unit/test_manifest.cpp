// offload.json: parsing, resolution, globbing and located diagnostics.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>

#include "offload_build/manifest/json_locator.hpp"
#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"

using namespace ob;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// A unique scratch project directory, removed at the end of the test.
class TempProject {
 public:
  TempProject() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("ob-manifest-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  ~TempProject() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  TempProject(const TempProject&) = delete;
  TempProject& operator=(const TempProject&) = delete;

  const fs::path& dir() const { return dir_; }
  fs::path manifest_path() const { return dir_ / "offload.json"; }

  void touch(const fs::path& rel) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << "int x;\n";
  }
  Result<manifest::Manifest> load(const std::string& text) const {
    std::ofstream(manifest_path(), std::ios::binary) << text;
    return manifest::load_manifest(manifest_path(), ob::toolchain::frontend::manifest_options());
  }

 private:
  fs::path dir_;
};

// The load failed with a usage error "FILE:LINE:COL: error: ..." containing `what`.
void require_error(const TempProject& p, const Result<manifest::Manifest>& r, size_t line, size_t column,
                   const std::string& what) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == exit_code::usage);
  const std::string where = p.manifest_path().string() + ":" + std::to_string(line) + ":" +
                            std::to_string(column) + ": error: ";
  CHECK_THAT(r.error().message, StartsWith(where));
  CHECK_THAT(r.error().message, Contains(what));
}

}  // namespace

TEST_CASE("a manifest with every key resolves every field", "[manifest]") {
  TempProject p;
  for (const char* f : {"src/main.c", "src/kern/saxpy.cpp", "src/kern/deep/reduce.cc"}) p.touch(f);
  auto m = p.load(R"json({
  "$schema": "../config/offload.schema.json",
  "description": "every key at once",
  "name": "saxpy",
  "output": "saxpy.bin",
  "build_dir": "out/bin/",
  "sources": ["src/main.c", "src/**/*.cpp", "src/kern/**/*.cc", "./src/main.c"],
  "targets": ["host", "sm_90", "gfx90a", "nvptx64-nvidia-cuda:sm_90", "x86_64"],
  "include_dirs": ["include", "/opt/include"],
  "defines": ["NDEBUG", "N=1024", "MAX(a,b)=((a)>(b)?(a):(b))"],
  "flags": ["-O2"],
  "host_flags": ["-march=native"],
  "device_flags": ["-O3"],
  "link_flags": ["-Wl,--as-needed"],
  "libs": ["m", "/usr/lib/libfoo.a"],
  "toolchain": "../llvm-22/"
})json");
  REQUIRE(m.ok());
  CHECK(m->file == p.manifest_path());
  CHECK(m->project_dir == p.dir());
  CHECK(m->name == "saxpy");
  CHECK(m->output == "saxpy.bin");
  CHECK(m->build_dir == p.dir() / "out" / "bin");
  CHECK(m->program_path() == p.dir() / "out/bin/saxpy.bin");
  REQUIRE(m->sources.size() == 3);
  CHECK(m->sources[0].path == p.dir() / "src/kern/deep/reduce.cc");
  CHECK(m->sources[0].language == manifest::Language::Cxx);
  CHECK(m->sources[1].path == p.dir() / "src/kern/saxpy.cpp");
  CHECK(m->sources[2].path == p.dir() / "src/main.c");
  CHECK(m->sources[2].language == manifest::Language::C);
  REQUIRE(m->targets.size() == 3);  // sm_90 and host given twice
  CHECK(m->targets[0] == manifest::Target{"x86_64-unknown-linux-gnu", "generic"});
  CHECK(m->targets[1] == manifest::Target{"nvptx64-nvidia-cuda", "sm_90"});
  CHECK(m->targets[2] == manifest::Target{"amdgcn-amd-amdhsa", "gfx90a"});
  CHECK(m->include_dirs == std::vector<std::string>{"include", "/opt/include"});
  CHECK(m->defines == std::vector<std::string>{"NDEBUG", "N=1024", "MAX(a,b)=((a)>(b)?(a):(b))"});
  CHECK(m->flags == std::vector<std::string>{"-O2"});
  CHECK(m->host_flags == std::vector<std::string>{"-march=native"});
  CHECK(m->device_flags == std::vector<std::string>{"-O3"});
  CHECK(m->link_flags == std::vector<std::string>{"-Wl,--as-needed"});
  CHECK(m->libs == std::vector<std::string>{"m", "/usr/lib/libfoo.a"});
  REQUIRE(m->toolchain.has_value());
  CHECK(*m->toolchain == p.dir().parent_path() / "llvm-22");
}

TEST_CASE("defaults: output is the name, build_dir is build/ next to the manifest", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  auto m = p.load(R"({"name": "app", "sources": ["main.c"], "targets": ["host"]})");
  REQUIRE(m.ok());
  CHECK(m->output == "app");
  CHECK(m->build_dir == p.dir() / "build");
  CHECK(m->program_path() == p.dir() / "build" / "app");
  CHECK_FALSE(m->toolchain.has_value());
  CHECK(m->flags.empty());
  CHECK(m->defines.empty());

  SECTION("an absolute build_dir is kept") {
    auto abs = p.load(R"({"name": "app", "sources": ["main.c"], "targets": ["host"], "build_dir": "/tmp/x/../out"})");
    REQUIRE(abs.ok());
    CHECK(abs->build_dir == fs::path("/tmp/out"));
  }
}

TEST_CASE("Fortran sources: .f90 and .F90 by extension, or \"language\": \"fortran\"", "[manifest][flang]") {
  TempProject p;
  p.touch("a.f90");
  p.touch("b.F90");
  p.touch("c.inc");
  auto m = p.load(R"({"name": "app", "sources": ["a.f90", "b.F90"], "targets": ["host"]})");
  REQUIRE(m.ok());
  REQUIRE(m->sources.size() == 2);
  CHECK(m->sources[0].language == manifest::Language::Fortran);
  CHECK(m->sources[1].language == manifest::Language::Fortran);
  auto forced = p.load(R"({"name": "app", "sources": ["c.inc"], "targets": ["host"], "language": "fortran"})");
  REQUIRE(forced.ok());
  CHECK(forced->sources.at(0).language == manifest::Language::Fortran);
  CHECK(manifest::language_name(manifest::Language::Fortran) == "fortran");
}

TEST_CASE("parse_manifest resolves a relative manifest path", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  const fs::path rel = fs::relative(p.manifest_path());
  REQUIRE(rel.is_relative());
  auto m = manifest::parse_manifest(R"({"name": "app", "sources": ["main.c"], "targets": ["sm_90"]})", rel, ob::toolchain::frontend::manifest_options());
  REQUIRE(m.ok());
  CHECK(m->file == p.manifest_path());
  CHECK(m->project_dir == p.dir());
  CHECK(m->sources.at(0).path == p.dir() / "main.c");

  auto bad = manifest::parse_manifest(R"({"name": "app", "sources": ["main.c"], "targets": ["sm9"]})", rel, ob::toolchain::frontend::manifest_options());
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, StartsWith(rel.string() + ":1:52: error: unknown offload target \"sm9\""));
}

TEST_CASE("globs expand *, ?, [...] and ** and are sorted and deduplicated", "[manifest]") {
  TempProject p;
  for (const char* f : {"src/main.c", "src/util.c", "src/.dot.c", "src/kern/a.cpp", "src/kern/deep/b.cc",
                        "src/kern/deep/c.cxx", "src/kern/.hidden/h.c", "src/x.C", "src/y.c++", "lib/z.c"})
    p.touch(f);
  auto m = p.load(R"({"name": "g", "targets": ["host"],
    "sources": ["src/**/*.c", "src/main.c", "src/?ain.c", "src/kern/**", "src/[xy].*"]})");
  REQUIRE(m.ok());
  std::vector<std::string> got;
  for (const auto& s : m->sources)
    got.push_back(s.path.lexically_relative(p.dir()).string() + (s.language == manifest::Language::C ? " c" : " c++"));
  CHECK(got == std::vector<std::string>{"src/kern/a.cpp c++", "src/kern/deep/b.cc c++", "src/kern/deep/c.cxx c++",
                                        "src/main.c c", "src/util.c c", "src/x.C c++", "src/y.c++ c++"});

  SECTION("** also matches zero directories") {
    auto files = manifest::expand_source_pattern(p.dir(), "src/**/main.c");
    REQUIRE(files.ok());
    CHECK(*files == std::vector<fs::path>{p.dir() / "src/main.c"});
  }
  SECTION("dot files match only when named explicitly") {
    auto files = manifest::expand_source_pattern(p.dir(), "src/.*.c");
    REQUIRE(files.ok());
    CHECK(*files == std::vector<fs::path>{p.dir() / "src/.dot.c"});
  }
}

TEST_CASE("repeated ** stays linear and globs stay inside the project", "[manifest]") {
  TempProject p;
  // A 30-deep chain d/d/.../d with a file at each level: with the old walk,
  // "**/d*/**/d*/..." found each file once per way of splitting its path
  // (minutes for six "**"); with each (directory, part) visited once it is
  // instant. ctest's timeout catches a regression as a hang.
  std::string rel = "t";
  for (int i = 0; i < 30; ++i) {
    rel += "/d";
    p.touch(rel + "/f.c");
  }
  std::string pattern = "t";
  for (int i = 0; i < 8; ++i) pattern += "/**/d*";
  auto files = manifest::expand_source_pattern(p.dir(), pattern + "/**/*.c");
  REQUIRE(files.ok());
  CHECK(files->size() == 30 - 7);  // f.c at depth >= 8
  auto plain = manifest::expand_source_pattern(p.dir(), "**/**/**/**/**/**/*.c");
  REQUIRE(plain.ok());
  CHECK(plain->size() == 30);

  for (const char* outside : {"/**", "../../**", "/tmp/*.c", "t/*/../../../*.c"}) {
    auto r = manifest::expand_source_pattern(p.dir(), outside);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("reaches outside the project directory"));
  }
  CHECK(manifest::expand_source_pattern(p.dir(), "t/d/../d/*.c").ok());  // climbs, but stays inside
}

TEST_CASE("language comes from the extension unless \"language\" forces it", "[manifest]") {
  CHECK(manifest::language_from_extension("a.c") == manifest::Language::C);
  for (const char* cxx : {"a.cpp", "a.cc", "a.cxx", "a.C", "a.c++"}) CHECK(manifest::language_from_extension(cxx) == manifest::Language::Cxx);
  CHECK_FALSE(manifest::language_from_extension("a.cu").has_value());
  CHECK_FALSE(manifest::language_from_extension("Makefile").has_value());
  CHECK(manifest::language_name(manifest::Language::C) == "c");
  CHECK(manifest::language_name(manifest::Language::Cxx) == "c++");

  TempProject p;
  p.touch("main.c");
  p.touch("kernel.cu");
  for (const char* forced : {"c++", "cxx"}) {
    auto m = p.load(std::string(R"({"name": "f", "targets": ["host"], "sources": ["main.c", "kernel.cu"], "language": ")") +
                    forced + "\"}");
    REQUIRE(m.ok());
    REQUIRE(m->sources.size() == 2);
    CHECK(m->sources[0].language == manifest::Language::Cxx);
    CHECK(m->sources[1].language == manifest::Language::Cxx);
  }
  auto c = p.load(R"({"name": "f", "targets": ["host"], "sources": ["kernel.cu"], "language": "c"})");
  REQUIRE(c.ok());
  CHECK(c->sources.at(0).language == manifest::Language::C);
}

TEST_CASE("JSON syntax errors point at the offending token", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  const std::string head = "{\n  \"name\": \"app\",\n";
  SECTION("trailing comma") {
    require_error(p, p.load(head + "  \"sources\": [\"main.c\"],\n  \"targets\": [\"host\",]\n}\n"), 4, 22,
                  "invalid JSON: unexpected ']' after ','; JSON allows no trailing comma, remove the last ','");
  }
  SECTION("missing comma between members") {
    require_error(p, p.load(head + "  \"sources\": [\"main.c\"]\n  \"targets\": [\"host\"]\n}\n"), 4, 3,
                  "invalid JSON: unexpected string literal; expected '}'");
  }
  SECTION("misspelled literal") {
    require_error(p, p.load("{\n  \"name\": tru,\n}"), 2, 11, "invalid JSON: invalid literal \"tru\"");
  }
  SECTION("single quotes") {
    require_error(p, p.load("{'name': 'app'}"), 1, 2, "invalid JSON: single quotes are not allowed");
  }
  SECTION("unexpected end of input") {
    require_error(p, p.load(head + "  \"sources\": [\"main.c\"]\n\n"), 3, 24,
                  "invalid JSON: unexpected end of input; expected '}'");
  }
  SECTION("number overflow") {
    require_error(p, p.load("{\n  \"name\": 1e999\n}"), 2, 11, "invalid JSON: number overflow parsing '1e999'");
  }
  SECTION("empty file") {
    require_error(p, p.load(""), 1, 1, "invalid JSON: unexpected end of input");
  }
}

TEST_CASE("structural errors are located at the key or value", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  p.touch("src/main.c");
  p.touch("kernel.cu");
  const std::string head = "{\n  \"name\": \"app\",\n";
  SECTION("top level is not an object") {
    require_error(p, p.load("\n  [\"host\"]"), 2, 3, "the manifest must be a JSON object, not a list");
  }
  SECTION("unknown key with did-you-mean") {
    require_error(p, p.load(head + "  \"sources\": [\"main.c\"],\n  \"tagets\": [\"host\"]\n}"), 4, 3,
                  "unknown key \"tagets\"; did you mean \"targets\"?");
  }
  SECTION("unknown key far from any known key lists them") {
    require_error(p, p.load(R"({"name": "a", "zzzzzz": 1, "sources": ["main.c"], "targets": ["host"]})"), 1, 15,
                  "unknown key \"zzzzzz\"; accepted keys: $schema, description, name, output,");
  }
  SECTION("missing required key points at the opening brace") {
    require_error(p, p.load(head + "  \"targets\": [\"host\"]\n}"), 1, 1,
                  "missing required key \"sources\"; add it, e.g. \"sources\": [\"src/*.c\"]");
    require_error(p, p.load("\n\n   {\"sources\": [\"main.c\"], \"targets\": [\"host\"]}"), 3, 4,
                  "missing required key \"name\"");
  }
  SECTION("wrong type for a list") {
    require_error(p, p.load(head + "  \"sources\": [\"main.c\"],\n  \"targets\": \"sm_90\"\n}"), 4, 14,
                  "\"targets\" must be a list of strings, not a string; write [\"sm_90\"]");
  }
  SECTION("wrong type for a list entry") {
    require_error(p, p.load(head + "  \"sources\": [\"main.c\", 7],\n  \"targets\": [\"host\"]\n}"), 3, 25,
                  "\"sources\" must be a list of strings, but entry 2 is a number");
  }
  SECTION("wrong type for a string") {
    require_error(p, p.load("{\"name\": 42, \"sources\": [\"main.c\"], \"targets\": [\"host\"]}"), 1, 10,
                  "\"name\" must be a string, not a number; e.g. \"name\": \"saxpy\"");
  }
  SECTION("a name that is not a file name needs an output") {
    require_error(p, p.load(head.substr(0, 2) + "  \"name\": \"a/b\",\n  \"sources\": [\"main.c\"],\n  \"targets\": [\"host\"]\n}"),
                  2, 11, "\"name\" \"a/b\" cannot be the program file name; set \"output\" to a file name");
  }
  SECTION("an unknown linker") {
    require_error(p, p.load(head + "  \"sources\": [\"main.c\"],\n  \"targets\": [\"host\"],\n  \"linker\": \"gold\"\n}"),
                  5, 13, "unknown linker \"gold\"; use \"lld\" (LLVM's, the default) or \"system\"");
  }
  SECTION("output must be a file name") {
    require_error(p, p.load(head + "  \"output\": \"bin/app\",\n  \"sources\": [\"main.c\"],\n  \"targets\": [\"host\"]\n}"),
                  3, 13, "\"output\" must be a file name, not \"bin/app\"");
  }
}

TEST_CASE("target errors are located at the list element", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  const std::string head = "{\n  \"name\": \"app\",\n  \"sources\": [\"main.c\"],\n";
  SECTION("unknown target with did-you-mean") {
    require_error(p, p.load(head + "  \"targets\": [\"host\", \"sm90\"]\n}"), 4, 23,
                  "unknown offload target \"sm90\"; did you mean \"sm_90\"? accepted: host, x86_64,");
  }
  SECTION("empty target list") {
    require_error(p, p.load(head + "  \"targets\": []\n}"), 4, 14,
                  "\"targets\" is empty; list at least one offload target, e.g. [\"host\"]");
  }
}

TEST_CASE("source errors are located at the list element", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  p.touch("src/main.c");
  p.touch("kernel.cu");
  auto with_sources = [&](const std::string& sources, const std::string& extra = "") {
    return p.load("{\n  \"name\": \"app\",\n  \"sources\": " + sources + ",\n  \"targets\": [\"host\"]" + extra + "\n}");
  };
  SECTION("missing source file with did-you-mean") {
    require_error(p, with_sources(R"(["main.c", "src/mian.c"])"), 3, 25,
                  "source file \"src/mian.c\" does not exist; did you mean \"src/main.c\"?");
  }
  SECTION("missing source file without a near match") {
    require_error(p, with_sources(R"(["nothing/here.c"])"), 3, 15,
                  "source file \"nothing/here.c\" does not exist; paths are relative to the manifest directory " +
                      p.dir().string());
  }
  SECTION("glob matching nothing") {
    require_error(p, with_sources(R"(["src/**/*.cpp"])"), 3, 15, "glob \"src/**/*.cpp\" matches no files");
  }
  SECTION("a directory is not a source") {
    require_error(p, with_sources(R"(["src"])"), 3, 15, "source \"src\" is a directory");
  }
  SECTION("empty sources list") {
    require_error(p, with_sources("[]"), 3, 14, "\"sources\" is empty; list at least one source file or glob");
  }
  SECTION("unknown extension") {
    require_error(p, with_sources(R"(["main.c", "kernel.cu"])"), 3, 25,
                  "source \"kernel.cu\" has unknown extension \".cu\"; accepted: .c (C), .cpp .cc .cxx .C .c++ (C++), "
                  ".f90 .F90 .f .F (Fortran), .rs (Rust crate root), or set \"language\"");
  }
  SECTION("a Rust crate root does not mix with C sources (more in test_rust_manifest.cpp)") {
    p.touch("lib.rs");
    require_error(p, with_sources(R"(["main.c", "lib.rs"])"), 3, 25,
                  "a Rust crate is built from its crate root alone");
  }
  SECTION("unknown language \"fortan\": did you mean fortran") {
    require_error(p, with_sources(R"(["main.c"])", ",\n  \"language\": \"fortan\""), 5, 15,
                  "unknown language \"fortan\"; did you mean \"fortran\"?");
  }
  SECTION("unknown language with did-you-mean") {
    require_error(p, with_sources(R"(["main.c"])", ",\n  \"language\": \"cpp\""), 5, 15,
                  "unknown language \"cpp\"; did you mean \"c++\"?");
  }
}

TEST_CASE("list entries are checked: defines, libs, include_dirs, flags", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  auto with = [&](const std::string& member) {
    return p.load("{\n  \"name\": \"app\",\n  \"sources\": [\"main.c\"],\n  \"targets\": [\"host\"],\n" + member + "\n}");
  };
  require_error(p, with(R"(  "defines": ["N=1", "-DDEBUG"])"), 5, 22,
                "\"defines\" entry \"-DDEBUG\" starts with -D; write NAME or NAME=VALUE without -D, e.g. \"DEBUG\"");
  require_error(p, with(R"(  "defines": ["=1"])"), 5, 15, "define \"=1\" does not start with a macro name");
  require_error(p, with(R"(  "defines": ["2X"])"), 5, 15, "define \"2X\" does not start with a macro name");
  require_error(p, with(R"(  "libs": ["-lm"])"), 5, 12, "\"libs\" entry \"-lm\" starts with -l; write the library name without -l, e.g. \"m\"");
  require_error(p, with(R"(  "include_dirs": ["-Iinclude"])"), 5, 20, "starts with -I");
  require_error(p, with(R"(  "flags": ["-O2", ""])"), 5, 20, "\"flags\" entry 2 is an empty string; remove it");
  require_error(p, with(R"(  "link_flags": "-lm")"), 5, 17, "\"link_flags\" must be a list of strings, not a string; write [\"-lm\"]");
  require_error(p, with(R"(  "toolchain": "")"), 5, 16, "\"toolchain\" is empty");
  require_error(p, with(R"(  "description": ["x"])"), 5, 18, "\"description\" must be a string, not a list");
}

TEST_CASE("target options in flags are an error naming the equivalent targets", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  auto with = [&](const std::string& member) {
    return p.load("{\n  \"name\": \"app\",\n  \"sources\": [\"main.c\"],\n  \"targets\": [\"host\"],\n" + member + "\n}");
  };
  // The flags a one-shot clang build used, copied into the manifest.
  require_error(p, with(R"(  "flags": ["-O2", "-fopenmp-targets=nvptx64-nvidia-cuda", "-Xopenmp-target", "-march=sm_80"])"),
                5, 20,
                "\"flags\" entry \"-fopenmp-targets=nvptx64-nvidia-cuda\" selects offload targets, which "
                "offload-build sets from \"targets\" (it adds -fopenmp and each target's options itself); "
                "remove it (and -Xopenmp-target -march=sm_80) and use \"targets\": [\"sm_80\"]");
  require_error(p, with(R"(  "device_flags": ["--offload-arch=sm_90,gfx90a"])"), 5, 20,
                "use \"targets\": [\"sm_90\", \"gfx90a\"]");
  require_error(p, with(R"(  "host_flags": ["-fopenmp-targets=x86_64-unknown-linux-gnu,amdgcn-amd-amdhsa", "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx942"])"),
                5, 18, "use \"targets\": [\"host\", \"gfx942\"]");
  require_error(p, with(R"(  "flags": ["--offload-targets=nvptx64-nvidia-cuda"])"), 5, 13,
                "use \"targets\": [\"sm_XX\"]");
  auto plain = with(R"(  "flags": ["-O2", "-fopenmp"])");
  require_error(p, plain, 5, 20, "\"flags\" entry \"-fopenmp\" selects offload targets");
  CHECK_THAT(plain.error().message, !Contains("use \"targets\""));  // nothing to translate
  CHECK(with(R"(  "flags": ["-O2", "-fopenmp-simd"])").ok());  // not a target option
}

TEST_CASE("the manifest's option lists are checked by the check its caller passes down", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  const std::string text = "{\n  \"name\": \"app\",\n  \"sources\": [\"main.c\"],\n  \"targets\": [\"host\"],\n"
                           "  \"flags\": [\"-O2\", \"-fopenmp\"],\n  \"libs\": [\"m\", \"refused\"]\n}";
  // The manifest stage knows no option spellings: without a check, -fopenmp passes.
  auto unchecked = manifest::parse_manifest(text, p.manifest_path(), manifest::ManifestOptions{});
  REQUIRE(unchecked.ok());
  CHECK(unchecked->flags == std::vector<std::string>{"-O2", "-fopenmp"});
  // A caller's check sees every list and is reported at the entry it names.
  std::vector<std::string> seen;
  manifest::ManifestOptions own{[&](const std::string& key, const std::vector<std::string>& values)
                          -> std::optional<std::pair<size_t, std::string>> {
    seen.push_back(key);
    if (key == "libs" && values.size() == 2) return std::pair(size_t{1}, std::string("no, not this one"));
    return std::nullopt;
  }};
  std::ofstream(p.manifest_path(), std::ios::binary) << text;
  require_error(p, manifest::load_manifest(p.manifest_path(), own), 6, 17, "no, not this one");
  CHECK(seen == std::vector<std::string>{"include_dirs", "defines", "flags", "host_flags", "device_flags",
                                         "link_flags", "libs"});
  // The frontends' check is the one refusing target options.
  require_error(p, manifest::parse_manifest(text, p.manifest_path(), ob::toolchain::frontend::manifest_options()), 5, 20,
                "\"flags\" entry \"-fopenmp\" selects offload targets");
}

TEST_CASE("columns count characters and keys may use escapes", "[manifest]") {
  TempProject p;
  p.touch("main.c");
  require_error(p, p.load(R"({"description": "héllo", "nme": 1})"), 1, 26, "unknown key \"nme\"; did you mean \"name\"?");
  require_error(p, p.load(R"({"name": "a", "sources": ["main.c"], "t\u0061gets": []})"), 1, 38, "unknown key \"tagets\"");
  auto ok = p.load(R"({"n\u0061me": "a", "sources": ["main.c"], "targets": ["host"]})");
  REQUIRE(ok.ok());
  CHECK(ok->name == "a");
}

TEST_CASE("JsonLocator maps JSON pointers to key and value positions", "[manifest]") {
  const manifest::JsonLocator loc("{\n  \"a\": [1, {\"b/c\": true}],\n  \"d~\": \"x\"\n}");
  CHECK(loc.value("") == manifest::TextPos{1, 1});
  CHECK(loc.key("/a") == manifest::TextPos{2, 3});
  CHECK(loc.value("/a") == manifest::TextPos{2, 8});
  CHECK(loc.value("/a/0") == manifest::TextPos{2, 9});
  CHECK(loc.value("/a/1") == manifest::TextPos{2, 12});
  CHECK(loc.key("/a/1/b~1c") == manifest::TextPos{2, 13});
  CHECK(loc.value("/a/1/b~1c") == manifest::TextPos{2, 20});
  CHECK(loc.key(manifest::json_pointer("", "d~")) == manifest::TextPos{3, 3});
  CHECK(loc.value("/d~0") == manifest::TextPos{3, 9});
  CHECK_FALSE(loc.value("/missing").has_value());
  CHECK(manifest::text_position("ab\ncd", 4) == manifest::TextPos{2, 2});
  CHECK(manifest::text_position("ab", 99) == manifest::TextPos{1, 3});
}

TEST_CASE("an unreadable manifest names the file and the reason", "[manifest]") {
  TempProject p;
  const fs::path missing = p.dir() / "nope" / "offload.json";
  auto r = manifest::load_manifest(missing, ob::toolchain::frontend::manifest_options());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == exit_code::usage);
  CHECK(r.error().message == "cannot read " + missing.string() + ": No such file or directory");

  auto dir = manifest::load_manifest(p.dir(), ob::toolchain::frontend::manifest_options());
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().message == "cannot read " + p.dir().string() + ": Is a directory");
}

TEST_CASE("config/offload.schema.json agrees with the manifest reader", "[manifest]") {
  std::ifstream in(fs::path(OB_SOURCE_DIR) / "config" / "offload.schema.json");
  REQUIRE(in.good());
  const nlohmann::json schema = nlohmann::json::parse(in, nullptr, false);
  REQUIRE(schema.is_object());
  CHECK(schema["required"] == nlohmann::json({"name", "sources", "targets"}));
  CHECK(schema["additionalProperties"] == false);

  TempProject p;
  auto unknown = p.load(R"({"zzzzzzzz": 0})");
  REQUIRE_FALSE(unknown.ok());
  for (const auto& [key, _] : schema["properties"].items()) {
    INFO("key: " << key);
    CHECK_THAT(unknown.error().message, Contains(key));  // listed as accepted
    auto r = p.load("{\"" + key + "\": 0}");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, !Contains("unknown key"));
  }

  const std::regex target_pattern(schema["properties"]["targets"]["items"]["pattern"].get<std::string>());
  for (const char* spelling : {"host", "x86_64", "x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu:generic",
                               "sm_90", "sm_90a", "sm_100", "nvptx64-nvidia-cuda:sm_80", "gfx90a", "gfx942",
                               "gfx1030", "amdgcn-amd-amdhsa:gfx1100", "sm90", "sm_9", "sm_90ab", "gfx90", "gfxabc",
                               "nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda:gfx90a", "amdgcn-amd-amdhsa:sm_90",
                               "x86_64-unknown-linux-gnu:sm_90", "hots", "SM_90", ""}) {
    INFO("spelling: " << spelling);
    CHECK(std::regex_match(spelling, target_pattern) == manifest::resolve_target(spelling).ok());
  }
}

TEST_CASE("remote_storage: one URL or a list, checked where it is written", "[manifest][remote]") {
  TempProject p;
  p.touch("main.c");
  auto one = p.load(R"({"name": "a", "sources": ["main.c"], "targets": ["host"], "remote_storage": "redis://h|read-only"})");
  INFO((one ? std::string() : one.error().message));
  REQUIRE(one.ok());
  CHECK(one->remote_storage == std::vector<std::string>{"redis://h|read-only"});
  auto two = p.load(R"({"name": "a", "sources": ["main.c"], "targets": ["host"],
    "remote_storage": ["redis://h", "http://c/ob"]})");
  REQUIRE(two.ok());
  CHECK(two->remote_storage.size() == 2);
  auto bad = p.load(R"({"name": "a", "sources": ["main.c"], "targets": ["host"],
    "remote_storage": ["redis://h", "http://u:hunter2@c/ob|layot=flat"]})");
  require_error(p, bad, 2, 37, "unknown attribute \"layot\"");
  CHECK_THAT(bad.error().message, !Contains("hunter2"));
  auto type = p.load(R"({"name": "a", "sources": ["main.c"], "targets": ["host"], "remote_storage": 5})");
  REQUIRE_FALSE(type.ok());
}
