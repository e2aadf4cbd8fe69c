// Rust std::offload end to end with the nightly rustc and LLVM 22: the examples,
// dry-run, and which passes rerun after an edit (the device pass is keyed on its
// own dep-info, so a host-only module never reruns it).
#include "rust_support.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

TEST_CASE("rust-saxpy builds, and run --verify shows the kernel launch and the right numbers",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  auto r = run_ob({"-C", dir.string(), "-v", "run", "--verify"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "rust-saxpy: n=1024 y[0]=1 y[10]=21 y[1023]=2047 mismatches=0 OK\n");
  CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch on device"));
  CHECK_THAT(r.err, Catch::Contains("(saxpy)"));
  // -v says which rustc and flavour, and why.
  CHECK_THAT(r.err, Catch::Contains("offload-build: rust: rustc ") && Catch::Contains("; flavour "));
  // The device pass has the cfg, the host pass does not.
  CHECK(count_occurrences(r.err, "--cfg offload_device") == 1);
  CHECK(count_occurrences(r.err, "--crate-type bin") == 1);
}

TEST_CASE("rust-saxpy --dry-run prints a script that bash runs into a working program",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-saxpy", tmp.path());
  auto r = run_ob({"-C", dir.string(), "--dry-run", "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(fs::exists(dir / "build"));
  CHECK(count_occurrences(r.out, "\n") == 8);  // cd, mkdir, device, image link, package, stub, embed, host+link
  CHECK_THAT(r.out, Catch::Contains("--cfg offload_device") && Catch::Contains("-Zoffload=Test") &&
                        Catch::Contains("-fembed-offload-object=build/obj/src/main.rs.offload"));
  write_file(tmp.path() / "build.sh", r.out);
  auto sh = run_tool({"bash", "-e", (tmp.path() / "build.sh").string()});
  INFO(sh.err);
  REQUIRE(sh.exit_code == 0);
  auto prog = run_tool({(dir / "build/rust-saxpy").string()}, dir, kMandatory);
  CHECK(prog.out == "rust-saxpy: n=1024 y[0]=1 y[10]=21 y[1023]=2047 mismatches=0 OK\n");
}

TEST_CASE("rust-nvptx: a no_core device crate for sm_90 builds and links its image",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  if (!fs::exists("/usr/local/cuda/bin/ptxas")) OB_SKIP("no CUDA ptxas at /usr/local/cuda for the nvptx device link");
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-nvptx", tmp.path());
  auto r = run_ob({"-C", dir.string(), "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto listing = run_tool({std::string(kLlvmBin) + "/llvm-objdump", "--offloading", (dir / "build/rust-nvptx").string()});
  REQUIRE(listing.exit_code == 0);
  CHECK(count_occurrences(listing.out, "OFFLOADING IMAGE") == 1);
  CHECK_THAT(listing.out, Catch::Contains("arch            sm_90\ntriple          nvptx64-nvidia-cuda"));
}

TEST_CASE("rust crate with modules: a host-only edit runs no device pass, a kernel edit does",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  // examples/rust-cargo's sources as an offload.json project: main.rs is lib.rs plus main.
  const fs::path dir = copy_rust_example("rust-cargo", tmp.path());
  write_file(dir / "src/main.rs", read_file(dir / "src/lib.rs") +
                                      "\n#[cfg(not(offload_device))]\nfn main() {\n    host::run();\n}\n");
  fs::remove(dir / "src/lib.rs");
  write_file(dir / "offload.json", R"({"name": "modules", "sources": ["src/main.rs"], "targets": ["host"],
  "flags": ["--edition=2024", "-O", "-Cpanic=abort"]})");
  const std::vector<std::string> build{"-C", dir.string(), "-v", "build"};

  auto first = run_ob(build);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(device_line(first.err, "host") == "] device host src/main.rs");
  CHECK(run_tool({(dir / "build/modules").string()}, dir, kMandatory).out ==
        "rust-cargo: x[0]=1 x[1]=3 x[255]=511 mismatches=0 OK\n");

  edit_file(dir / "src/host.rs", "println!(\"rust-cargo:", "println!(\"edited host:");
  auto host_edit = run_ob(build);
  INFO(host_edit.err);
  REQUIRE(host_edit.exit_code == 0);
  // The device pass's dep-info does not list the host-only module: its job is
  // up to date (nothing read) and no device rustc runs.
  CHECK(device_line(host_edit.err, "host") == "] device host src/main.rs (up to date)");
  CHECK(count_occurrences(host_edit.err, "--cfg offload_device") == 0);  // no device rustc ran
  CHECK(count_occurrences(host_edit.err, "--crate-type bin") == 1);     // the host pass did
  CHECK(run_tool({(dir / "build/modules").string()}, dir, kMandatory).out ==
        "edited host: x[0]=1 x[1]=3 x[255]=511 mismatches=0 OK\n");

  edit_file(dir / "src/kernel.rs", "* 2.0 + 1.0", "* 3.0 + 1.0");
  auto kernel_edit = run_ob(build);
  INFO(kernel_edit.err);
  REQUIRE(kernel_edit.exit_code == 0);
  CHECK(device_line(kernel_edit.err, "host") == "] device host src/main.rs");
  CHECK(count_occurrences(kernel_edit.err, "--cfg offload_device") == 1);
  auto prog = run_tool({(dir / "build/modules").string()}, dir, kMandatory);
  CHECK_THAT(prog.out, Catch::StartsWith("edited host: x[0]=1 x[1]=4 x[255]=766 "));  // the new kernel ran
}

TEST_CASE("rust-cargo: cargo run through offload-build and host-only edits keep the device pass fresh",
          "[integration][rust]") {
  OB_REQUIRE_NIGHTLY_RUSTC();
  TempDir tmp;
  const fs::path dir = copy_rust_example("rust-cargo", tmp.path());
  const std::vector<std::string> run{"-C", dir.string(), "cargo", "run", "--release"};

  auto first = run_ob(run);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == "rust-cargo: x[0]=1 x[1]=3 x[255]=511 mismatches=0 OK\n");
  CHECK(device_line(first.err, "host") == "] device host rust-cargo");
  CHECK_THAT(first.err, Catch::Contains("Compiling rust-cargo"));  // cargo's own output reaches the user
  CHECK(fs::exists(device_dir(dir / "target", "host", "rust-cargo") / "offload/rust_cargo.host.o"));

  edit_file(dir / "src/host.rs", "println!(\"rust-cargo:", "println!(\"edited host:");
  auto host_edit = run_ob(run);
  INFO(host_edit.err);
  REQUIRE(host_edit.exit_code == 0);
  CHECK(device_line(host_edit.err, "host") == "] device host rust-cargo (fresh)");
  CHECK(host_edit.out == "edited host: x[0]=1 x[1]=3 x[255]=511 mismatches=0 OK\n");

  edit_file(dir / "src/kernel.rs", "* 2.0 + 1.0", "* 3.0 + 1.0");
  auto kernel_edit = run_ob(run);
  INFO(kernel_edit.err);
  CHECK(kernel_edit.exit_code == 1);  // the host's check expects 2x+1
  CHECK(device_line(kernel_edit.err, "host") == "] device host rust-cargo");
  CHECK_THAT(kernel_edit.out, Catch::StartsWith("edited host: x[0]=1 x[1]=4 x[255]=766 "));

  // The dev profile too: its bounds and overflow checks need the device image's core.
  auto dev = run_ob({"-C", dir.string(), "cargo", "run"});
  INFO(dev.err);
  CHECK(dev.exit_code == 1);  // the same edited kernel, unoptimized
  CHECK_THAT(dev.out, Catch::StartsWith("edited host: x[0]=1 x[1]=4 x[255]=766 "));
  CHECK(fs::exists(dir / "target/x86_64-unknown-linux-gnu/debug/rust-cargo"));

  auto dry = run_ob({"-C", dir.string(), "--dry-run", "cargo", "build", "--release"});
  INFO(dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK_THAT(dry.out, Catch::Contains("cargo rustc --lib -p rust-cargo --crate-type staticlib --target "
                                      "x86_64-unknown-linux-gnu --target-dir ") &&
                          Catch::Contains(" build --message-format=json-diagnostic-rendered-ansi --offline"));
}
