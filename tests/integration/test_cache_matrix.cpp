// The cache mutation matrix: each case changes one thing, rebuilds with
// --explain, and asserts exactly which jobs missed (every other job must hit),
// that the shared counters moved by the same amounts, and that the program
// built from that mix of hits and misses runs correctly.
#include <catch2/catch.hpp>

#include "support/cache_stats.hpp"

#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kProgramOk = "matrix: out[3]=7.0 bad=0 OK\n";

struct Explained {
  std::set<std::string> hits, misses, up_to_date;
  std::map<std::string, std::string> reasons;
};

Explained parse_explain(const std::string& err) {
  Explained e;
  const std::string tag = "offload-build: explain: ";
  for (const auto& line : util::split(err, '\n')) {
    if (line.rfind(tag, 0) != 0) continue;
    std::string rest = line.substr(tag.size());
    if (util::ends_with(rest, ": hit")) {
      e.hits.insert(rest.substr(0, rest.size() - 5));
    } else if (util::ends_with(rest, ": up to date")) {
      e.up_to_date.insert(rest.substr(0, rest.size() - 12));
    } else if (auto pos = rest.find(": miss: "); pos != std::string::npos) {
      e.misses.insert(rest.substr(0, pos));
      e.reasons[rest.substr(0, pos)] = rest.substr(pos + 8);
    }
  }
  return e;
}

class Matrix {
 public:
  // `two_parse`: every build gets --two-parse (each device pass parses the
  // host side itself); otherwise the default single-parse form.
  explicit Matrix(bool two_parse) : two_parse_(two_parse), dir_(tmp_ / "proj"), cache_(tmp_ / "cache") {
    fs::copy(fs::path(OB_TEST_FIXTURES) / "cache-matrix", dir_, fs::copy_options::recursive);
  }

  const fs::path& dir() const { return dir_; }
  const fs::path& cache() const { return cache_; }
  fs::path tmp(const std::string& rel) const { return tmp_ / rel; }
  bool two_parse() const { return two_parse_; }

  // offload-build's arguments for this project and cache, then `more`.
  std::vector<std::string> args(std::vector<std::string> more) const {
    std::vector<std::string> a{"-C", dir_.string(), "--cache-dir", cache_.string()};
    if (two_parse_) a.push_back("--two-parse");
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }

  nlohmann::json stats() { return cache_stats(cache_); }

  // Build with --explain; the result lists the jobs that hit and missed.
  Explained build(const Env& env = {}, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = this->args({"--explain"});
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("build");
    auto before = stats();
    auto r = run_ob(args, {}, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto e = parse_explain(r.err);
    auto after = stats();
    // The shared counters moved exactly as the explained decisions say.
    CHECK(after["hits"].get<int>() - before["hits"].get<int>() == int(e.hits.size()));
    CHECK(after["misses"].get<int>() - before["misses"].get<int>() == int(e.misses.size()));
    last_err_ = r.err;
    return e;
  }

  void run_program() {
    auto r = run_tool({(dir_ / "build/matrix").string()}, dir_, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == kProgramOk);
  }

  void edit(const std::string& rel, const std::string& from, const std::string& to) {
    std::string text = read_file(dir_ / rel);
    auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    text.replace(pos, from.size(), to);
    write_file(dir_ / rel, text);
  }

  const std::string& last_err() const { return last_err_; }

 private:
  bool two_parse_;
  TempDir tmp_;
  fs::path dir_, cache_;
  std::string last_err_;
};

using Jobs = std::set<std::string>;

Jobs operator+(Jobs a, const Jobs& b) {
  a.insert(b.begin(), b.end());
  return a;
}

const Jobs kHostIr = {"host-ir kern.c", "host-ir main.c"};  // single parse only
const Jobs kDevices = {"device host kern.c", "device host main.c"};
const Jobs kHosts = {"host kern.c", "host main.c"};
const Jobs kPackages = {"package kern.c", "package main.c"};
const Jobs kLink = {"link build/matrix"};
const Jobs kTwoParseJobs = kDevices + kPackages + kHosts + kLink;
const Jobs kSingleParseJobs = kHostIr + kTwoParseJobs;

// Every job of the current plan missed, hit, or was up to date (its recorded
// state unchanged), and the misses are exactly `expected`.
void expect_misses(const Explained& e, const Jobs& expected, const Jobs& all) {
  CHECK(e.misses == expected);
  std::set<std::string> not_rebuilt;
  for (const auto& j : all)
    if (!expected.count(j)) not_rebuilt.insert(j);
  std::set<std::string> served = e.hits;
  served.insert(e.up_to_date.begin(), e.up_to_date.end());
  CHECK(served == not_rebuilt);
  for (const auto& j : e.hits) CHECK_FALSE(e.up_to_date.count(j));
}

}  // namespace

// Run for both layouts of a C TU. Single parse: the host-IR job feeds the
// device compile and the host codegen, which reads no source or header and
// no -D/-I: edits that leave the host IR and the image unchanged serve it.
TEST_CASE("cache mutation matrix", "[integration][cache]") {
  const bool two = GENERATE(false, true);
  INFO((two ? "--two-parse" : "single parse"));
  Matrix m(two);
  const Jobs kAllJobs = two ? kTwoParseJobs : kSingleParseJobs;
  // What reruns when every TU's parse changes: two parse, the device and
  // host compiles; single parse, the host-IR and device compiles.
  const Jobs kCompiles = two ? kDevices + kHosts : kHostIr + kDevices;
  auto expect = [&](const Explained& e, const Jobs& if_two, const Jobs& if_single) {
    expect_misses(e, two ? if_two : if_single, kAllJobs);
  };
  // The job that first reads the source: its reasons name what changed.
  auto parse_of = [&](const std::string& tu) { return (two ? "host " : "host-ir ") + tu; };
  // 0. Cold build: everything misses and runs.
  expect(m.build(), kAllJobs, kAllJobs);
  m.run_program();

  SECTION("1. clean rebuild: every job served, no compiler runs") {
    fs::remove_all(m.dir() / "build");
    auto r = run_ob(m.args({"-v", "build"}));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("clang") == std::string::npos);  // the driver's listing is remembered too
    CHECK(r.err.find("llvm-offload-binary") == std::string::npos);
    CHECK_THAT(r.err, Catch::Contains(two ? "7 jobs: 7 from cache, 0 run" : "9 jobs: 9 from cache, 0 run"));
    m.run_program();
  }
  SECTION("2. touching a source (mtime only) changes nothing") {
    fs::last_write_time(m.dir() / "kern.c", fs::file_time_type::clock::now());
    expect(m.build(), {}, {});
    m.run_program();
  }
  SECTION("3. editing a header reruns the TUs that include it") {
    m.edit("include/params.h", "#define N 512", "#define N 512\n#define UNUSED_MACRO 3");
    auto e = m.build();
    // Both TUs include params.h; the new macro changes no object byte, so the
    // packages and the link are served again from the unchanged images (and,
    // single parse, the host codegen from the unchanged host IR).
    expect(e, kCompiles, kCompiles);
    CHECK(e.reasons[parse_of("main.c")] == "file changed: include/params.h");
    m.run_program();
  }
  SECTION("4. changing a -D reruns every compile") {
    m.edit("offload.json", "UNUSED_DEFINE=1", "UNUSED_DEFINE=2");
    auto e = m.build();
    expect(e, kCompiles, kCompiles);
    CHECK_THAT(e.reasons[parse_of("kern.c")], Catch::Contains("flag added: -DUNUSED_DEFINE=2") &&
                                                    Catch::Contains("flag removed: -DUNUSED_DEFINE=1"));
    m.run_program();
  }
  SECTION("5. reordering -I reruns every compile") {
    m.edit("offload.json", R"(["include", "include2"])", R"(["include2", "include"])");
    auto e = m.build();
    expect(e, kCompiles, kCompiles);
    CHECK(e.reasons[parse_of("kern.c")] == "flags reordered");
    m.run_program();
  }
  SECTION("6. changing -O reruns every compile and the link") {
    m.edit("offload.json", "-O1", "-O2");
    // main.c has no target region: its device image, hence its package, is unchanged.
    const Jobs rerun = kDevices + kHosts + Jobs{"package kern.c"} + kLink;
    expect(m.build(), rerun, rerun + kHostIr);
    m.run_program();
  }
  SECTION("7. adding a target runs only that target's device jobs, then repackages") {
    m.edit("offload.json", R"("targets": ["host"])", R"("targets": ["host", "gfx90a"])");
    auto e = m.build();
    const Jobs gfx = {"device gfx90a kern.c", "device gfx90a main.c"};
    // Single parse: the host-IR jobs rerun (their command names every target)
    // but write the same IR, so the host-device compiles are served.
    const Jobs rerun = gfx + kPackages + kHosts + kLink;
    expect_misses(e, two ? rerun : rerun + kHostIr, kAllJobs + gfx);
    CHECK_THAT(e.reasons["device gfx90a kern.c"], Catch::Contains("target gfx90a added"));
    m.run_program();
    SECTION("8. removing it again is served entirely from the cache") {
      m.edit("offload.json", R"("targets": ["host", "gfx90a"])", R"("targets": ["host"])");
      expect(m.build(), {}, {});
      m.run_program();
    }
  }
  SECTION("9. a different compiler binary at the same path misses") {
    // A toolchain whose clang is a wrapper script; rewriting the script is a new binary.
    fs::path llvm = m.tmp("llvm");
    fs::create_directories(llvm / "bin");
    for (const char* tool : {"llvm-offload-binary", "clang-linker-wrapper", "llvm-objdump"})
      fs::create_symlink(std::string(kLlvmBin) + "/" + tool, llvm / "bin" / tool);
    auto wrapper = [&](const std::string& comment) {
      for (const char* tool : {"clang", "clang++"}) {
        write_file(llvm / "bin" / tool, "#!/bin/sh\n# " + comment + "\nexec " + kLlvmBin + "/" +
                                            tool + " \"$@\"\n");
        fs::permissions(llvm / "bin" / tool, fs::perms::owner_all);
      }
    };
    wrapper("version 1");
    m.edit("offload.json", R"("name": "matrix",)",
           R"("name": "matrix", "toolchain": ")" + llvm.string() + R"(",)");
    // llvm-offload-binary is the same program (a symlink to it) and gets the
    // same images, so the packages are served. Single parse: the device
    // compiles are the cc1 lines the wrapper's driver lists, which run the
    // real clang (the one the wrapper runs) on the same inputs: served too.
    const Jobs two_rerun = kDevices + kHosts + kLink;
    const Jobs single_rerun = kHostIr + kHosts + kLink;
    expect(m.build(), two_rerun, single_rerun);  // first build with this toolchain
    wrapper("version 2, a different build");
    auto e = m.build();
    expect(e, two_rerun, single_rerun);
    // The same job was stored with the other binary: --explain names the compiler, both versions.
    CHECK_THAT(e.reasons[parse_of("kern.c")], Catch::Contains("only its compiler differs") &&
                                                  Catch::Contains((llvm / "bin/clang").string() + " size="));
    m.run_program();
  }
  SECTION("10. CPATH changes every compile") {
    auto e = m.build({{"CPATH", m.tmp("nowhere").string()}});
    // The host codegen is keyed on the compile environment too.
    expect(e, kCompiles, kCompiles + kHosts);
    CHECK_THAT(e.reasons["host main.c"], Catch::Contains("environment changed: CPATH="));
    m.run_program();
  }
  SECTION("11. moving a target region down one line reruns its TU, and the program runs") {
    m.edit("kern.c", "void saxpy(", "\nvoid saxpy(");
    auto e = m.build();
    const Jobs rerun = {"device host kern.c", "package kern.c", "host kern.c", "link build/matrix"};
    expect(e, rerun, rerun + Jobs{"host-ir kern.c"});
    m.run_program();
  }
  SECTION("12. identical content under a new inode is served (kernel names are stable)") {
    std::string text = read_file(m.dir() / "kern.c");
    write_file(m.dir() / "kern.c.new", text);
    fs::rename(m.dir() / "kern.c.new", m.dir() / "kern.c");
    expect(m.build(), {}, {});
    m.run_program();
  }
  SECTION("26. a header saved by rename (an editor's save) with the same bytes is served") {
    write_file(m.dir() / "include/params.h.swp", read_file(m.dir() / "include/params.h"));
    fs::rename(m.dir() / "include/params.h.swp", m.dir() / "include/params.h");
    expect(m.build(), {}, {});
    m.run_program();
  }
  SECTION("27. an edit and its revert, both by rename (sed -i), are served the second time") {
    const std::string text = read_file(m.dir() / "include/params.h");
    auto save_by_rename = [&](const std::string& content) {
      write_file(m.dir() / "include/.params.h.tmp", content);
      fs::rename(m.dir() / "include/.params.h.tmp", m.dir() / "include/params.h");
    };
    save_by_rename(text + "\n#define SEDDED 1\n");
    expect(m.build(), kCompiles, kCompiles);
    m.run_program();
    save_by_rename(text);
    expect(m.build(), {}, {});
    m.run_program();
  }
  SECTION("13. deleting an included header is a compile error, never a stale hit") {
    std::string saved = read_file(m.dir() / "include2/extra.h");
    // Moved away rather than deleted: its inode stays in use, so the file
    // written back below cannot reuse it.
    fs::rename(m.dir() / "include2/extra.h", m.tmp("extra.h.deleted"));
    auto r = run_ob(m.args({"build"}));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("'extra.h' file not found"));
    write_file(m.dir() / "include2/extra.h", saved);
    // The header is back with the same content (and a new inode): kernel
    // names do not depend on inodes, so every job is served.
    expect(m.build(), {}, {});
    m.run_program();
  }
  SECTION("14. a source using __TIME__ is never served") {
    m.edit("main.c", "int main(void) {", "const char *built_at = __TIME__;\nint main(void) {");
    auto e1 = m.build();
    CHECK(e1.misses.count("device host main.c"));
    CHECK(e1.misses.count(parse_of("main.c")));
    CHECK_THAT(e1.reasons[parse_of("main.c")], Catch::Contains("__TIME__"));
    auto e2 = m.build();
    CHECK(e2.misses.count("device host main.c"));
    CHECK(e2.misses.count(parse_of("main.c")));
    CHECK(e2.up_to_date.count("host kern.c"));
    CHECK(m.stats()["misses_by_reason"]["time macros"].get<int>() == 4);
    m.run_program();
    SECTION("15. unless the manifest opts in") {
      m.edit("offload.json", R"("name": "matrix",)", R"("name": "matrix", "cache_time_macros": true,)");
      m.build();
      auto e3 = m.build();
      CHECK(e3.misses.empty());
      m.run_program();
    }
  }
  SECTION("16. editing the host-only TU reruns its compiles; its device image is unchanged") {
    m.edit("main.c", "int bad = 0;", "volatile int edited = 1; (void)edited;\n  int bad = 0;");
    auto e = m.build();
    // main.c has no target region: its device object is byte-identical, so its package hits.
    const Jobs rerun = {"device host main.c", "host main.c", "link build/matrix"};
    expect(e, rerun, rerun + Jobs{"host-ir main.c"});
    m.run_program();
  }
  // With device_flags or host_flags a device pass's own host parse would
  // differ from the host pass's: TUs take the two-parse form, whose device
  // and host compiles this single-parse cache has not seen yet; the images
  // and host objects are the same bytes, so the packages and the link hit.
  SECTION("17. device_flags rerun only device compiles") {
    m.edit("offload.json", R"("flags": ["-O1"])", R"("flags": ["-O1"], "device_flags": ["-DDEV_ONLY"])");
    auto e = m.build();
    expect_misses(e, two ? kDevices : kDevices + kHosts, kTwoParseJobs);
    m.run_program();
  }
  SECTION("18. host_flags rerun only host compiles") {
    m.edit("offload.json", R"("flags": ["-O1"])", R"("flags": ["-O1"], "host_flags": ["-DHOST_ONLY"])");
    auto e = m.build();
    expect_misses(e, two ? kHosts : kDevices + kHosts, kTwoParseJobs);
    m.run_program();
  }
  SECTION("19. link_flags rerun only the link") {
    m.edit("offload.json", R"("flags": ["-O1"])", R"("flags": ["-O1"], "link_flags": ["-Wl,-z,now"])");
    auto e = m.build();
    expect(e, kLink, kLink);
    CHECK(e.reasons["link build/matrix"] == "flag added: -Wl,-z,now");
    m.run_program();
  }
  SECTION("20. SOURCE_DATE_EPOCH changes every compile") {
    expect(m.build({{"SOURCE_DATE_EPOCH", "1700000000"}}), kCompiles, kCompiles + kHosts);
    m.run_program();
  }
  SECTION("21. after cache clear everything misses") {
    REQUIRE(run_ob({"--cache-dir", m.cache().string(), "cache", "clear"}).exit_code == 0);
    fs::remove_all(m.dir() / "build");
    expect(m.build(), kAllJobs, kAllJobs);
    m.run_program();
  }
  SECTION("22. --no-cache runs everything and leaves the counters alone") {
    auto before = m.stats();
    auto r = run_ob(m.args({"--no-cache", "build"}));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains(two ? "7 jobs: 0 from cache, 7 run" : "9 jobs: 0 from cache, 9 run"));
    CHECK(m.stats() == before);
    m.run_program();
  }
  SECTION("23. a copy of the project at another path is served entirely, byte for byte") {
    // Kernel names come from each file's place in the project, not its inode
    // or the checkout's path (docs/CACHE.md): the copy runs no command.
    fs::path copy = m.tmp("copy");
    fs::copy(m.dir(), copy, fs::copy_options::recursive);
    fs::remove_all(copy / "build");
    std::vector<std::string> args = m.args({"--explain", "-v", "build"});
    args[1] = copy.string();
    auto r = run_ob(args);
    REQUIRE(r.exit_code == 0);
    // The driver's listings made in the original directory serve the copy too.
    CHECK(r.err.find("-###") == std::string::npos);
    auto e = parse_explain(r.err);
    CHECK(e.misses.empty());
    CHECK(e.hits == kAllJobs);
    CHECK(read_file(copy / "build/matrix") == read_file(m.dir() / "build/matrix"));
    auto p = run_tool({(copy / "build/matrix").string()}, copy, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
    CHECK(p.out == kProgramOk);
  }
  SECTION("28. a git clone at another path runs no command, and its edits still miss") {
    auto git = [&](const fs::path& dir, std::vector<std::string> args) {
      args.insert(args.begin(), {"git", "-C", dir.string(), "-c", "user.name=t", "-c", "user.email=t@t"});
      auto r = run_tool(args);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    };
    write_file(m.dir() / ".gitignore", "build/\n");
    git(m.dir(), {"init", "-q"});
    git(m.dir(), {"add", "-A"});
    git(m.dir(), {"commit", "-qm", "matrix"});
    const fs::path clone = m.tmp("clone");
    git(m.tmp(""), {"clone", "-q", m.dir().string(), clone.string()});
    // As CI does (templates/github-actions.yml): the cache directory restored
    // into another place, a fresh clone built with it.
    const fs::path restored = m.tmp("restored-cache");
    fs::copy(m.cache(), restored, fs::copy_options::recursive);
    std::vector<std::string> args = m.args({"--explain", "build"});
    args[1] = clone.string();
    args[3] = restored.string();
    auto r = run_ob(args);
    REQUIRE(r.exit_code == 0);
    auto e = parse_explain(r.err);
    CHECK(e.misses.empty());
    CHECK(e.hits == kAllJobs);
    CHECK(read_file(clone / "build/matrix") == read_file(m.dir() / "build/matrix"));
    // A real edit in the clone is a real miss.
    std::string k = read_file(clone / "kern.c");
    write_file(clone / "kern.c", "\n" + k);
    auto e2 = parse_explain(run_ob(args).err);
    CHECK(e2.misses.count(parse_of("kern.c")));
    auto p = run_tool({(clone / "build/matrix").string()}, clone, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
    CHECK(p.out == kProgramOk);
  }
  SECTION("25. a no-op build finds every job up to date from recorded state") {
    auto e = m.build();
    CHECK(e.up_to_date == kAllJobs);
    CHECK(e.hits.empty());
    CHECK(e.misses.empty());
    CHECK_THAT(m.last_err(), Catch::Contains(two ? "7 jobs: 0 from cache, 0 run, 7 up to date"
                                                 : "9 jobs: 0 from cache, 0 run, 9 up to date"));
    // Touching a file breaks the shortcut for the jobs that read it: they are
    // hashed again and served from the cache, which rewrites their outputs, so
    // the jobs reading those are served too; kern.c's jobs stay up to date.
    fs::last_write_time(m.dir() / "main.c", fs::file_time_type::clock::now());
    auto t = m.build();
    const Jobs main_jobs = {"device host main.c", "package main.c", "host main.c", "link build/matrix"};
    const Jobs kern_jobs = {"device host kern.c", "package kern.c", "host kern.c"};
    CHECK(t.hits == (two ? main_jobs : main_jobs + Jobs{"host-ir main.c"}));
    CHECK(t.up_to_date == (two ? kern_jobs : kern_jobs + Jobs{"host-ir kern.c"}));
    CHECK(t.misses.empty());
    m.run_program();
  }
  SECTION("24. the same edit made twice is served the second time") {
    m.edit("include/params.h", "#define SCALE 2.0f", "#define SCALE 2.0f /* v2 */");
    expect(m.build(), kCompiles, kCompiles);
    m.edit("include/params.h", "#define SCALE 2.0f /* v2 */", "#define SCALE 2.0f");
    expect(m.build(), {}, {});
    m.run_program();
  }
}
