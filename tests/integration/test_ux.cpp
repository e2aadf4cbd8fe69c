// How a build looks: the status line on a terminal, plain lines in a pipe or
// CI, --quiet, colors and NO_COLOR, and compiler output that is never torn.
#include <catch2/catch.hpp>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"
#include "support/terminal.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const Env kNoCi = {{"CI", std::nullopt}};

struct Project {
  TempDir tmp{"ob-ux"};
  fs::path dir;
  std::string cache;
  explicit Project(const std::string& example = "saxpy-c")
      : dir(copy_example(example, tmp.path())), cache((tmp.path() / "cache").string()) {}
  std::vector<std::string> args(std::vector<std::string> more) const {
    std::vector<std::string> a{"-C", dir.string(), "--cache-dir", cache};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }
};

bool any_line_starts_with(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) { return util::join(lines, "\n"); }

}  // namespace

TEST_CASE("on a terminal the progress is one status line rewritten in place", "[ux]") {
  if (!have_script()) OB_SKIP("util-linux `script` is not installed");
  Project p;
  auto r = run_ob_on_terminal(p.args({"-j2", "build"}));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // Every status is drawn from column 0 and clears the rest of the line; none ends with a newline.
  CHECK_THAT(r.out, Catch::Contains("\r[2/5] device host saxpy.c\x1b[K"));
  CHECK_THAT(r.out, Catch::Contains("\r[3/5] package saxpy.c\x1b[K\r[4/5] host saxpy.c\x1b[K"));
  CHECK_THAT(r.out, Catch::Contains("\r[5/5] link build/saxpy\x1b[K"));
  CHECK_FALSE(Catch::Contains("[2/5] device host saxpy.c\r\n").match(r.out));
  // What stays on the screen: the last status, then the summary (prefix in color).
  const auto screen = render_terminal(r.out);
  REQUIRE(screen.size() == 2);
  CHECK(screen[0] == "[5/5] link build/saxpy");
  CHECK_THAT(screen[1], Catch::StartsWith("offload-build: 5 jobs: 0 from cache, 5 run in ") &&
                            Catch::EndsWith(" s"));
  CHECK_THAT(r.out, Catch::Contains("\x1b[1;32moffload-build:\x1b[0m 5 jobs"));

  SECTION("a long status line is cut in the middle to the terminal's width") {
    fs::remove_all(p.dir / "build");
    auto narrow = run_ob_on_terminal(p.args({"--no-cache", "build"}), {}, 20);
    REQUIRE(narrow.exit_code == 0);
    CHECK_THAT(narrow.out, Catch::Contains("\r[1/5] ho... saxpy.c\x1b[K"));
  }
}

TEST_CASE("NO_COLOR and --color=never turn colors off and the status line stays", "[ux]") {
  if (!have_script()) OB_SKIP("util-linux `script` is not installed");
  Project p;
  auto r = run_ob_on_terminal(p.args({"build"}), {{"NO_COLOR", "1"}});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("\r[2/5] device host saxpy.c\x1b[K"));
  CHECK_FALSE(Catch::Contains("\x1b[1;").match(r.out));
  CHECK_THAT(r.out, Catch::Contains("\noffload-build: 5 jobs: 0 from cache, 5 run in "));

  fs::remove_all(p.dir / "build");
  auto never = run_ob_on_terminal(p.args({"--color=never", "build"}));
  REQUIRE(never.exit_code == 0);
  CHECK_FALSE(Catch::Contains("\x1b[1;").match(never.out));
  // And --color=always colors a pipe.
  fs::remove_all(p.dir / "build");
  auto always = run_ob(p.args({"--color=always", "build"}));
  REQUIRE(always.exit_code == 0);
  CHECK_THAT(always.err, Catch::Contains("\x1b[1;32moffload-build:\x1b[0m 5 jobs"));
  CHECK_FALSE(Catch::Contains("\x1b[K").match(always.err));
}

TEST_CASE("compiler warnings and errors on a terminal are printed whole, never inside the status line",
          "[ux]") {
  if (!have_script()) OB_SKIP("util-linux `script` is not installed");
  Project p;
  write_file(p.dir / "offload.json",
             R"({"name": "saxpy", "output": "saxpy", "sources": ["saxpy.c", "more.c"],
                 "targets": ["host"], "flags": ["-O2", "-Wall"], "libs": ["m"]})");
  write_file(p.dir / "more.c", "int more(void) { int unused_here; return 1; }\n");
  auto r = run_ob_on_terminal(p.args({"-j2", "build"}));
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto screen = render_terminal(r.out);
  INFO(joined(screen));
  // The warning starts its own line: no status text in front of it.
  CHECK(any_line_starts_with(screen, "more.c:1:22: warning: unused variable 'unused_here'"));
  for (const auto& line : screen)
    if (line.find("warning:") != std::string::npos) CHECK(line.rfind("more.c:", 0) == 0);
  CHECK(any_line_starts_with(screen, "offload-build: 9 jobs: 0 from cache, 9 run in "));

  SECTION("a failing compile: its errors, then offload-build's, each from column 0") {
    write_file(p.dir / "more.c", "int more(void) { return 1 }\n");
    auto bad = run_ob_on_terminal(p.args({"-j1", "build"}));
    INFO(bad.out);
    CHECK(bad.exit_code == 1);
    auto lines = render_terminal(bad.out);
    INFO(joined(lines));
    CHECK(any_line_starts_with(lines, "more.c:1:26: error: expected ';' after return statement"));
    CHECK(any_line_starts_with(lines, "offload-build: error: host-ir more.c failed with exit code 1"));
    CHECK_THAT(bad.out, Catch::Contains("\x1b[1;31merror:\x1b[0m host-ir more.c failed"));
    for (const auto& line : lines) CHECK(line.rfind("[", 0) != 0);  // no status line left behind
  }
}

TEST_CASE("plain lines when the output is not a terminal, or CI is set, or TERM is dumb", "[ux]") {
  Project p;
  const std::string expected = "[1/5] host-ir saxpy.c\n[2/5] device host saxpy.c\n[3/5] package saxpy.c\n"
                               "[4/5] host saxpy.c\n[5/5] link build/saxpy\n";
  SECTION("a pipe") {
    auto r = run_ob(p.args({"-j1", "build"}), {}, kNoCi);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::StartsWith(expected + "offload-build: 5 jobs: 0 from cache, 5 run in "));
    CHECK_FALSE(Catch::Contains("\r").match(r.err));
    CHECK_FALSE(Catch::Contains("\x1b").match(r.err));
  }
  if (!have_script()) OB_SKIP("util-linux `script` is not installed");
  SECTION("a terminal with CI=1") {
    auto r = run_ob_on_terminal(p.args({"-j1", "build"}), {{"CI", "1"}});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("[1/5] host-ir saxpy.c\r\n[2/5] device host saxpy.c\r\n"));
    CHECK_FALSE(Catch::Contains("\x1b[K").match(r.out));
  }
  SECTION("a terminal with TERM=dumb") {
    auto r = run_ob_on_terminal(p.args({"-j1", "build"}), {{"TERM", "dumb"}});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("[1/5] host-ir saxpy.c\r\n"));
    CHECK_FALSE(Catch::Contains("\x1b").match(r.out));  // dumb: no colors either
  }
}

TEST_CASE("quiet option prints no progress and no summary, only errors", "[ux]") {
  Project p;
  auto r = run_ob(p.args({"--quiet", "build"}), {}, kNoCi);
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  CHECK(fs::exists(p.dir / "build/saxpy"));
  if (have_script()) {
    fs::remove_all(p.dir / "build");
    auto t = run_ob_on_terminal(p.args({"-q", "build"}));
    CHECK(t.exit_code == 0);
    CHECK(t.out == "");
  }
  write_file(p.dir / "saxpy.c", "int main(void) { return 0 }\n");
  auto bad = run_ob(p.args({"-q", "build"}), {}, kNoCi);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Catch::Contains("error: expected ';'"));
  CHECK_THAT(bad.err, Catch::Contains("offload-build: error: host-ir saxpy.c failed"));
  CHECK_FALSE(Catch::Contains("[1/").match(bad.err));
}

TEST_CASE("a build served from the cache prints the warnings its compiles printed", "[ux]") {
  Project p;
  write_file(p.dir / "offload.json",
             R"({"name": "saxpy", "output": "saxpy", "sources": ["saxpy.c", "more.c"],
                 "targets": ["host"], "flags": ["-O2", "-Wall"], "libs": ["m"]})");
  write_file(p.dir / "more.c", "int more(void) { int unused_here; return 1; }\n");
  const std::string warning = "more.c:1:22: warning: unused variable 'unused_here'";
  auto first = run_ob(p.args({"-j1", "build"}), {}, {{"CI", "1"}});
  REQUIRE(first.exit_code == 0);
  const size_t printed = count_occurrences(first.err, warning);
  CHECK(printed >= 1);
  fs::remove_all(p.dir / "build");
  auto again = run_ob(p.args({"-j1", "build"}), {}, {{"CI", "1"}});
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(again.err, Catch::Contains("9 jobs: 9 from cache, 0 run"));
  CHECK(count_occurrences(again.err, warning) == printed);
  // Up to date: nothing ran and nothing was served, so nothing is printed again.
  auto noop = run_ob(p.args({"-j1", "build"}), {}, {{"CI", "1"}});
  CHECK(count_occurrences(noop.err, warning) == 0);
}
