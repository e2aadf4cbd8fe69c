// docs/RUST.md as a user types it (issue 31 item 5): every command line of
// its ```sh blocks runs here, word for word, through bash, in a directory
// holding copies of the examples it names, with offload-build and
// cargo-offload on PATH. A command the doc gains that this test does not run,
// or one the test runs that the doc lost, fails the test. The block that
// shows `--dry-run build`'s script (it starts with `cd`) is compared with the
// script offload-build prints, then run.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <regex>
#include <set>

#include "offload_build/util/strings.hpp"
#include "rust_support.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

struct Blocks {
  std::vector<std::string> commands;  // every sh block but the dry-run script, in order
  std::vector<std::string> script;    // the dry-run script's lines
};

// RUST.md's ```sh blocks: continuation lines joined, comments ("  # ...") dropped.
Blocks rust_md_blocks() {
  Blocks out;
  bool in_sh = false, in_other = false, first = false, is_script = false;
  std::string pending;
  static const std::regex comment(R"(\s+#\s.*$)");
  for (std::string line : util::split(read_file(fs::path(OB_SOURCE_DIR) / "docs/RUST.md"), '\n')) {
    if (util::starts_with(line, "```")) {
      if (in_sh || in_other) {
        in_sh = in_other = false;
      } else {
        in_sh = line == "```sh";
        in_other = !in_sh;
        first = true;
      }
      continue;
    }
    if (!in_sh) continue;
    line = util::trim(std::regex_replace(line, comment, ""));
    if (first) is_script = util::starts_with(line, "cd ");
    first = false;
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1);
      continue;
    }
    line = pending + line;
    pending.clear();
    if (line.empty()) continue;
    (is_script ? out.script : out.commands).push_back(line);
  }
  return out;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

TEST_CASE("docs/RUST.md: every command of its sh blocks runs as written", "[docs][integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-rust-docs"};
  const fs::path work = tmp / "work";
  for (const char* example : {"rust-saxpy", "rust-nvptx", "rust-cargo", "rust-workspace"})
    copy_rust_example(example, work / "examples");
  const fs::path bin = fs::path(OB_BINARY).parent_path();
  const Env env{{"PATH", bin.string() + ":" + env_or("PATH", "/usr/bin:/bin")},
                {"CI", "1"},
                {"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()},
                {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
                {"MAKEFLAGS", std::nullopt}};
  using Check = std::function<void(const process::Captured&)>;
  auto ok_with = [](std::string out, std::string err = "") -> Check {
    return [out, err](const process::Captured& r) {
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::Contains(out));
      CHECK_THAT(r.err, Catch::Contains(err));
    };
  };
  const std::string cargo_ok = "rust-cargo: x[0]=1 x[1]=3 x[255]=511 mismatches=0 OK";
  const std::string launch = "offload-build: verify: offload: 1 kernel launch on device 0";
  // Each command of the doc, in its order, and what it must do.
  const std::map<std::string, Check> checks{
      {"offload-build -C examples/rust-saxpy run --verify", ok_with("mismatches=0 OK", launch)},
      // Run by the next test case, which needs CUDA's ptxas.
      {"offload-build -C examples/rust-nvptx build", [](const process::Captured&) {}},
      {"offload-build -C examples/rust-cargo cargo run --release --verify", ok_with(cargo_ok, launch)},
      {"offload-build doctor", ok_with("rust: nightly rustc")},
      {"offload-build -C examples/rust-cargo cargo build", ok_with("", "offload-build: built ")},
      {"offload-build -C examples/rust-cargo cargo run --release -- ARGS", ok_with(cargo_ok)},
      {"offload-build -C examples/rust-cargo cargo run --verify", ok_with(cargo_ok, launch)},
      {"offload-build -C examples/rust-workspace cargo run", ok_with("OK")},
      {"offload-build -C examples/rust-cargo cargo test", ok_with("test result: ok.", "] cargo test rust-cargo")},
      {"offload-build -C examples/rust-cargo cargo check", ok_with("", "] device host rust-cargo")},
      {"offload-build --target host -C examples/rust-cargo cargo build", ok_with("", "offload-build: built ")},
      {"cargo offload run --release", ok_with(cargo_ok)},  // in examples/rust-cargo
      {"offload-build cargo --help", ok_with("cargo +TOOLCHAIN offload")},
      {"offload-build init --lang cargo my-crate", ok_with("offload-build -C my-crate cargo run --verify")},
  };
  const Blocks doc = rust_md_blocks();
  std::set<std::string> in_doc(doc.commands.begin(), doc.commands.end());
  for (const auto& c : doc.commands) {
    INFO("docs/RUST.md has a command this test does not run: " << c);
    CHECK(checks.count(c) == 1);
  }
  for (const auto& [c, check] : checks) {
    INFO("docs/RUST.md no longer has this command in a ```sh block: " << c);
    CHECK(in_doc.count(c) == 1);
  }
  for (const auto& c : doc.commands) {
    auto it = checks.find(c);
    if (it == checks.end()) continue;
    if (c == "offload-build -C examples/rust-nvptx build") continue;
    const fs::path dir = util::starts_with(c, "cargo offload ") ? work / "examples/rust-cargo" : work;
    auto r = run_tool({"bash", "-c", c}, dir, env);
    INFO("$ " << c << "\n" << r.out << r.err);
    it->second(r);
  }
  // The init'd package works as the doc says.
  auto crate = run_tool({"bash", "-c", "offload-build -C my-crate cargo run --verify"}, work, env);
  INFO(crate.out << crate.err);
  CHECK(crate.exit_code == 0);

  // The dry-run block: offload-build's script, with this checkout's paths as the doc's.
  REQUIRE_FALSE(doc.script.empty());
  auto dry = run_tool({"bash", "-c", "offload-build -C examples/rust-saxpy --dry-run build"}, work, env);
  REQUIRE(dry.exit_code == 0);
  std::string printed = dry.out;
  auto replace_all = [](std::string& s, const std::string& from, const std::string& to) {
    for (size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, from.size(), to);
  };
  replace_all(printed, (work / "examples").string(), "/work/main/examples");
  replace_all(printed, (fs::path(OB_BINARY).parent_path() / "rust-device-stub.ll").string(),
              "/usr/local/lib/offload-build/rust-device-stub.ll");
  std::vector<std::string> lines;
  for (auto line : util::split(util::trim(printed), '\n')) {
    // rustc and clang are printed with their full paths; the doc names them.
    for (const char* tool : {"rustc", "clang", "llvm-offload-binary"})
      if (line.find('/') == 0 && line.find("/" + std::string(tool) + " ") != std::string::npos &&
          line.find("/" + std::string(tool) + " ") < line.find(' '))
        line = tool + line.substr(line.find(' '));
    lines.push_back(line);
  }
  CHECK(lines == doc.script);
  auto script = run_tool({"bash", "-ec", dry.out}, work, env);
  INFO(script.err);
  REQUIRE(script.exit_code == 0);
  auto prog = run_tool({(work / "examples/rust-saxpy/build/rust-saxpy").string()}, work, kMandatory);
  CHECK_THAT(prog.out, Catch::Contains("mismatches=0 OK"));
}

// Its own test: without CUDA's ptxas it is skipped, and the checks above
// still pass or fail on their own.
TEST_CASE("docs/RUST.md: the rust-nvptx build command builds an sm_90 image", "[docs][integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  if (access("/usr/local/cuda/bin/ptxas", X_OK) != 0)
    OB_SKIP("no CUDA ptxas at /usr/local/cuda/bin/ptxas for RUST.md's rust-nvptx build");
  TempDir tmp{"ob-rust-docs-nvptx"};
  const fs::path work = tmp / "work";
  copy_rust_example("rust-nvptx", work / "examples");
  const Blocks doc = rust_md_blocks();
  REQUIRE(std::count(doc.commands.begin(), doc.commands.end(), "offload-build -C examples/rust-nvptx build") == 1);
  const Env env{{"PATH", fs::path(OB_BINARY).parent_path().string() + ":" + env_or("PATH", "/usr/bin:/bin")},
                {"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()},
                {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
                {"MAKEFLAGS", std::nullopt}};
  auto r = run_tool({"bash", "-c", "offload-build -C examples/rust-nvptx build"}, work, env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto listing = run_tool({"/usr/lib/llvm-22/bin/llvm-objdump", "--offloading",
                           (work / "examples/rust-nvptx/build/rust-nvptx").string()},
                          work, {});
  INFO(listing.out << listing.err);
  CHECK_THAT(listing.out, Catch::Contains("sm_90"));
}

namespace {

// A heading's anchor as GitHub makes it: lower case, spaces to '-', other
// punctuation dropped.
std::string anchor_of(const std::string& heading) {
  std::string out;
  for (char c : heading) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') out += char(std::tolower(c));
    else if (c == ' ') out += '-';
  }
  return out;
}

}  // namespace

TEST_CASE("cmake --install installs the docs and examples that offload-build's messages name",
          "[docs][integration][install]") {
  TempDir tmp{"ob-install-docs"};
  const fs::path prefix = tmp / "prefix";
  auto install = run_tool({"cmake", "--install", fs::path(OB_BINARY).parent_path().string(), "--prefix",
                           prefix.string()});
  INFO(install.out << install.err);
  REQUIRE(install.exit_code == 0);
  const fs::path share = prefix / "share/offload-build";
  // Every docs/X.md[#anchor] and examples/NAME the sources name (messages, and
  // the comments that point at them).
  static const std::regex named(R"((docs/[A-Za-z_]+\.md)(#[a-z0-9_-]+)?|(examples/[a-z0-9-]+))");
  std::set<std::string> seen;
  size_t anchors = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(OB_SOURCE_DIR) / "src")) {
    if (!e.is_regular_file()) continue;
    const std::string text = read_file(e.path());
    for (std::sregex_iterator m(text.begin(), text.end(), named), end; m != end; ++m) {
      if (!seen.insert(m->str()).second) continue;
      INFO(e.path().string() << " names " << m->str());
      if ((*m)[3].matched) {
        CHECK(fs::is_directory(share / m->str()));
        CHECK_FALSE(fs::exists(share / m->str() / "target"));
        continue;
      }
      const fs::path doc = share / (*m)[1].str();
      REQUIRE(fs::is_regular_file(doc));
      if (!(*m)[2].matched) continue;
      ++anchors;
      std::set<std::string> headings;
      static const std::regex heading(R"(^#+ (.*)$)");
      bool fenced = false;
      for (const auto& line : util::split(read_file(doc), '\n')) {
        if (util::starts_with(line, "```")) fenced = !fenced;
        std::smatch h;
        if (!fenced && std::regex_match(line, h, heading)) headings.insert(anchor_of(util::trim(h[1].str())));
      }
      CHECK(headings.count((*m)[2].str().substr(1)) == 1);
    }
  }
  CHECK(seen.count("examples/rust-cargo") == 1);
  CHECK(seen.count("docs/RUST.md#kernel-signatures") == 1);
  CHECK(anchors >= 3);
}

TEST_CASE("RUST.md's GPU statement: --target sm_90 on the cargo examples stops before cargo, saying what works",
          "[docs][integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-rust-docs-gpu"};
  for (const char* example : {"rust-cargo", "rust-workspace"}) {
    const fs::path dir = copy_rust_example(example, tmp.path());
    auto r = run_ob({"--target", "sm_90", "-C", dir.string(), "cargo", "build"});
    INFO(example << "\n" << r.err);
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Catch::Contains("target sm_90: this rustc has no `core` for nvptx64-nvidia-cuda") &&
                          Catch::Contains("as examples/rust-nvptx does"));
    CHECK_FALSE(fs::exists(dir / "target/offload-device"));  // no device pass started
  }
}
