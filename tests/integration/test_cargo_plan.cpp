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

// A cargo package of examples/rust-nvptx's no_core sm_90 kernel: the kernel
// and its launcher in src/lib.rs, main in src/main.rs (release only: the
// minimal core has no overflow checks).
fs::path nvptx_package(const fs::path& dir) {
  std::string lib = read_file(fs::path(OB_EXAMPLES) / "rust-nvptx/src/main.rs");
  const std::string main_at = "#[cfg(not(offload_device))]\nfn main()";
  REQUIRE(lib.find(main_at) != std::string::npos);
  lib.erase(lib.find(main_at));
  const std::string no_main = "#![cfg_attr(offload_device, no_main)]\n", launch = "\nfn launch(";
  REQUIRE(lib.find(no_main) != std::string::npos);
  lib.erase(lib.find(no_main), no_main.size());
  REQUIRE(lib.find(launch) != std::string::npos);
  lib.replace(lib.find(launch), launch.size(), "\npub fn launch(");
  fs::create_directories(dir / "src");
  write_file(dir / "src/lib.rs", lib);
  write_file(dir / "src/main.rs", "fn main() {\n    let mut x: [f64; 256] = core::array::from_fn(|i| i as f64);\n"
                                  "    gpu::launch(&mut x);\n    println!(\"gpu: x[1]={}\", x[1]);\n}\n");
  write_file(dir / "Cargo.toml", "[package]\nname = \"gpu\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n"
                                 "[package.metadata.offload]\ntargets = [\"sm_90\"]\n\n[profile.release]\npanic = \"abort\"\n\n"
                                 "[lints.rust]\nunexpected_cfgs = { level = \"warn\", check-cfg = ['cfg(offload_device)'] }\n");
  return dir;
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
  const fs::path report = tmp / "report.json";
  auto r = run_ob({"-C", (ws / "app").string(), "--cache-dir", cache.string(), "-j2", "--trace", trace.string(),
                   "--report", report.string(), "cargo", "run"});
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
  REQUIRE(id.count("cargo build app"));
  const auto deps = [&](const std::string& name) { return events.at(id.at(name)).at("args").at("deps").get<std::vector<size_t>>(); };
  CHECK(deps("device host kernels").empty());  // the device passes wait for nothing: they may run at once
  CHECK(deps("device host kernels2").empty());
  auto package_deps = deps("package app");
  std::sort(package_deps.begin(), package_deps.end());
  CHECK(package_deps == std::vector<size_t>{std::min(id["device host kernels"], id["device host kernels2"]),
                                            std::max(id["device host kernels"], id["device host kernels2"])});
  // The host pass comes last, after the package (or the embed that holds it).
  const auto link_deps = deps("cargo build app");
  REQUIRE(link_deps.size() == 1);
  const std::string before_link = events.at(link_deps.front()).at("name").get<std::string>();
  CHECK((before_link == "package app" || before_link == "host app"));

  // --report: the plan's jobs, the device images missed by the cache (the
  // only jobs it keys), the rest never cached.
  const json rep = json::parse(read_file(report));
  CHECK(rep.at("result") == "ok");
  CHECK(rep.at("manifest") == (ws / "app/Cargo.toml").string());
  std::map<std::string, int> kinds;
  for (const auto& j : rep.at("jobs")) {
    ++kinds[j.at("kind").get<std::string>()];
    if (j.at("kind") == "device") {
      CHECK(j.at("cache") == "miss");
      CHECK(j.at("reason_code") == "no entry");
    } else {
      CHECK(j.at("cache") == "uncacheable");
    }
  }
  CHECK(kinds["device"] == 2);  // per kernel crate x target
  CHECK(kinds["link"] == 1);    // the host pass
  CHECK(kinds["package"] >= 1);

  // Another checkout at another path, the same cache: both images served
  // (a served job runs no command); cargo's host pass builds the program.
  const fs::path other = two_kernel_crates(tmp / "two");
  auto again = run_ob({"-C", (other / "app").string(), "--cache-dir", cache.string(), "-j2", "--report",
                       report.string(), "cargo", "run"});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == kOk);
  CHECK_THAT(again.err, Catch::Contains("] device host kernels (cached)\n") &&
                            Catch::Contains("] device host kernels2 (cached)\n"));
  CHECK_THAT(again.err, Catch::Contains(" jobs: 2 from cache, "));
  for (const auto& j : json::parse(read_file(report)).at("jobs"))
    if (j.at("kind") == "device") CHECK(j.at("cache") == "hit");
}

TEST_CASE("cargo flow: a failing device pass says why with its command, and nothing after it runs",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp{"ob-cargo-fail"};
  const fs::path dir = copy_rust_example("rust-cargo", tmp.path()), trace = tmp / "trace.json";
  edit_file(dir / "src/kernel.rs", "* 2.0 + 1.0", "* 2.0 + 1.0 +");
  auto r = run_ob({"-C", dir.string(), "--no-cache", "--trace", trace.string(), "cargo", "build"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("expected expression") &&  // cargo's own message first
                        Catch::Contains("offload-build: error: the device pass of rust-cargo for target host failed "
                                        "(cargo's messages above say why)\n  command: env RUSTC=") &&
                        Catch::Contains(" rustc --lib -p rust-cargo --crate-type staticlib "));
  CHECK_FALSE(Catch::Contains("] cargo build rust-cargo").match(r.err));
  CHECK_FALSE(Catch::Contains(" jobs: ").match(r.err));
  const auto events = events_by_job(trace);
  REQUIRE(events.count(0));
  CHECK(events.at(0).at("name") == "device host rust-cargo");
  CHECK(events.at(0).at("args").at("status") == "failed");
  for (const auto& [job, e] : events) CHECK(e.at("name") != "cargo build rust-cargo");  // the host pass never started
  CHECK_FALSE(fs::exists(device_dir(dir / "target", "host", "rust-cargo") / "offload/rust_cargo.host.o"));
}

TEST_CASE("cargo flow: cargo says fresh but the image is gone, so cargo clean -p and the pass again",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  if (!fs::exists("/usr/local/cuda/bin/ptxas")) OB_SKIP("no CUDA ptxas at /usr/local/cuda for the nvptx device link");
  TempDir tmp{"ob-cargo-gone"};
  const fs::path dir = nvptx_package(tmp / "gpu");
  const std::vector<std::string> build{"-C", dir.string(), "--no-cache", "cargo", "build", "--release"};
  auto first = run_ob(build);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(device_line(first.err, "sm_90") == "] device sm_90 gpu");
  // A GPU's bitcode is an extra output cargo does not track: gone, cargo still says fresh.
  const fs::path image = device_dir(dir / "target", "sm_90", "gpu") / "offload/gpu.sm_90.bc";
  REQUIRE(fs::remove(image));
  auto again = run_ob(build);
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.err, Catch::Contains("Removed "));  // cargo clean's own line
  CHECK(device_line(again.err, "sm_90") == "] device sm_90 gpu");  // ran again, not "(fresh)"
  CHECK(fs::exists(image));
  CHECK(fs::exists(image.parent_path().parent_path() / "CACHEDIR.TAG"));
}
