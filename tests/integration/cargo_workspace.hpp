// Shared by the cargo integration tests: a small workspace whose kernel's
// result depends on a feature and a cfg, so a program that prints OK proves
// both passes built the same code.
#pragma once

#include <algorithm>

#include "rust_support.hpp"
#include "support/ob_process.hpp"

namespace ob::test {

// A workspace: `kern` (one kernel whose factor depends on a feature and a
// cfg, and a host function that launches it and checks its result against
// the host's own view of the factor) and `app`, which prints that check.
inline fs::path factor_workspace(const fs::path& dir, const std::string& app_dependency = "kern = { path = \"../kern\" }",
                          const std::string& app_features = "") {
  fs::create_directories(dir / "kern/src");
  fs::create_directories(dir / "app/src");
  write_file(dir / "Cargo.toml", "[workspace]\nmembers = [\"app\", \"kern\"]\nresolver = \"3\"\n\n"
                                 "[profile.dev]\npanic = \"abort\"\n\n[profile.release]\npanic = \"abort\"\n");
  write_file(dir / "kern/Cargo.toml",
             "[package]\nname = \"kern\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n"
             "[features]\nsquares = []\n\n"
             "[lints.rust]\nunexpected_cfgs = { level = \"warn\", check-cfg = ['cfg(offload_device)', 'cfg(tripled)'] }\n");
  write_file(dir / "kern/src/lib.rs", R"(#![feature(rustc_attrs)]
#![cfg_attr(not(offload_device), feature(core_intrinsics))]
#![cfg_attr(offload_device, no_std)]
#![allow(internal_features)]

pub const N: usize = 8;

// One factor per build: the feature and the cfg both passes must see alike.
pub const fn factor() -> f64 {
    let mut f = 1.0;
    if cfg!(feature = "squares") {
        f *= 2.0;
    }
    if cfg!(tripled) {
        f *= 3.0;
    }
    f
}

#[cfg(offload_device)]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    unsafe extern "C" {
        fn abort() -> !;
    }
    unsafe { abort() }
}

#[cfg(offload_device)]
#[unsafe(no_mangle)]
#[rustc_offload_kernel]
pub extern "C" fn scale(_dyn_ptr: *mut u8, x: *mut [f64; N]) {
    let x = unsafe { &mut *x };
    for i in 0..N {
        x[i] = i as f64 * factor();
    }
}

#[cfg(not(offload_device))]
unsafe extern "C" {
    fn scale(x: *mut [f64; N]);
}

#[cfg(not(offload_device))]
pub fn report() -> String {
    let mut x = [0.0f64; N];
    core::intrinsics::offload::<_, _, ()>(scale, [1, 1, 1], [1, 1, 1], (&mut x as *mut [f64; N],));
    let expect = (N - 1) as f64 * factor();
    format!("x[7]={} expect={} {}", x[N - 1], expect, if x[N - 1] == expect { "OK" } else { "WRONG" })
}
)");
  write_file(dir / "app/Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
                                     "publish = false\n\n[dependencies]\n" + app_dependency + "\n" + app_features);
  write_file(dir / "app/src/main.rs", "fn main() {\n    println!(\"{}\", kern::report());\n}\n");
  return dir;
}

// `offload-build -C DIR --cache-dir CACHE OURS... cargo ARGS...` under
// OMP_TARGET_OFFLOAD=MANDATORY, without the environment's rustflags (unless
// `env` sets them).
inline process::Captured cargo_in(const fs::path& dir, const fs::path& cache, const std::vector<std::string>& cargo_args,
                                  Env env = {}, const std::vector<std::string>& ours = {}) {
  std::vector<std::string> args{"-C", dir.string(), "--cache-dir", cache.string()};
  args.insert(args.end(), ours.begin(), ours.end());
  args.push_back("cargo");
  args.insert(args.end(), cargo_args.begin(), cargo_args.end());
  env.insert(env.end(), kMandatory.begin(), kMandatory.end());
  for (const char* v : {"RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS",
                        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS"})
    if (std::none_of(env.begin(), env.end(), [&](const auto& e) { return e.first == v; }))
      env.emplace_back(v, std::nullopt);
  return run_ob(args, {}, env);
}

// `cargo run` in app (cargo_in); `extra` after `run`.
inline process::Captured cargo_run(const fs::path& ws, const fs::path& cache, std::vector<std::string> extra = {},
                                   Env env = {}, std::vector<std::string> ours = {}) {
  extra.insert(extra.begin(), "run");
  return cargo_in(ws / "app", cache, extra, std::move(env), ours);
}

// The program printed exactly `line` and succeeded.
inline void check_ok(const process::Captured& r, const std::string& line) {
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == line + "\n");
}

}  // namespace ob::test
