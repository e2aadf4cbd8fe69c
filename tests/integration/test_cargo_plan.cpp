// The cargo flow as one plan run by the build context (issue 19 item 2): its
// device passes are jobs of the plan (per kernel crate x target), run at once
// under -j, the package after every device image, the host pass after the
// package; the device images served by the job cache to another checkout.
#include <catch2/catch.hpp>

#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "rust_support.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;
using nlohmann::json;

namespace {

const std::string kOk = "gather: out[0]=510 out[255]=255 OK\nblock_sums: sums[0]=120 sums[15]=3960 OK\n";

// examples/rust-workspace with a second kernel crate, `kernels2` (the same
// kernels under other symbols), that `app` depends on too.
fs::path two_kernel_crates(const fs::path& dest) {
  const fs::path ws = copy_rust_example("rust-workspace", dest);
  fs::copy(ws / "kernels", ws / "kernels2", fs::copy_options::recursive);
  edit_file(ws / "kernels2/Cargo.toml", "name = \"kernels\"", "name = \"kernels2\"");
  for (const char* file : {"kernels2/src/device.rs", "kernels2/src/host.rs"}) {
    const std::regex symbols(R"(\b(gather|block_sums)\b)");
    write_file(ws / file, std::regex_replace(read_file(ws / file), symbols, "$1_2"));
  }
  edit_file(ws / "Cargo.toml", "members = [\"app\", \"kernels\"]", "members = [\"app\", \"kernels\", \"kernels2\"]");
  edit_file(ws / "app/Cargo.toml", "kernels = { path = \"../kernels\" }",
            "kernels = { path = \"../kernels\" }\nkernels2 = { path = \"../kernels2\" }");
  return ws;
}

// The trace's complete events by job id.
std::map<size_t, json> events_by_job(const fs::path& trace) {
  std::map<size_t, json> out;
  const json t = json::parse(read_file(trace));
  for (const auto& e : t.at("traceEvents"))
    if (e.at("ph") == "X") out[e.at("args").at("job").get<size_t>()] = e;
  return out;
}

}  // namespace

TEST_CASE("cargo flow: two kernel crates' device passes are jobs of one plan, the package after both",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-plan"};
  const fs::path ws = two_kernel_crates(tmp / "one"), cache = tmp / "cache", trace = tmp / "trace.json";
  auto r = run_ob({"-C", (ws / "app").string(), "--cache-dir", cache.string(), "-j2", "--trace", trace.string(),
                   "cargo", "run"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == kOk);
  CHECK_THAT(r.err, Catch::Contains("] device host kernels\n") && Catch::Contains("] device host kernels2\n"));

  // One event per job; each job's deps are the plan's, not the step before it.
  const auto events = events_by_job(trace);
  std::map<std::string, size_t> id;
  for (const auto& [job, e] : events) {
    id[e.at("name").get<std::string>()] = job;
    CHECK(e.at("args").at("status") == "ran");
    for (size_t d : e.at("args").at("deps").get<std::vector<size_t>>()) {  // started after its deps ended
      REQUIRE(events.count(d));
      CHECK(e.at("ts").get<long long>() + 1 >= events.at(d).at("ts").get<long long>() + events.at(d).at("dur").get<long long>());
    }
  }
  REQUIRE(id.count("device host kernels"));
  REQUIRE(id.count("device host kernels2"));
  REQUIRE(id.count("package app"));
  REQUIRE(id.count("link app"));
  const auto deps = [&](const std::string& name) { return events.at(id.at(name)).at("args").at("deps").get<std::vector<size_t>>(); };
  CHECK(deps("device host kernels").empty());  // the device passes wait for nothing: they may run at once
  CHECK(deps("device host kernels2").empty());
  auto package_deps = deps("package app");
  std::sort(package_deps.begin(), package_deps.end());
  CHECK(package_deps == std::vector<size_t>{std::min(id["device host kernels"], id["device host kernels2"]),
                                            std::max(id["device host kernels"], id["device host kernels2"])});
  // The host pass comes last, after the package (or the embed that holds it).
  const auto link_deps = deps("link app");
  REQUIRE(link_deps.size() == 1);
  const std::string before_link = events.at(link_deps.front()).at("name").get<std::string>();
  CHECK((before_link == "package app" || before_link == "host app"));

  // Another checkout at another path, the same cache: both images served
  // (a served job runs no command); cargo's host pass builds the program.
  const fs::path other = two_kernel_crates(tmp / "two");
  auto again = run_ob({"-C", (other / "app").string(), "--cache-dir", cache.string(), "-j2", "cargo", "run"});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == kOk);
  CHECK_THAT(again.err, Catch::Contains("] device host kernels (cached)\n") &&
                            Catch::Contains("] device host kernels2 (cached)\n"));
  CHECK_THAT(again.err, Catch::Contains(" jobs: 2 from cache, "));
}
