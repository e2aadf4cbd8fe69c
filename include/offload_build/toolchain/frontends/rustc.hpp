// rustc's std::offload flags: the exact argv of each Rust job, and the flag
// groups cargo.hpp hands to `cargo rustc`. Only this file knows rustc's
// offload flags; the planners ask the Rust frontend (rust_frontend.hpp),
// which hands them on.
//
// One crate, two cfgs: the device pass (per target) gets `--cfg <device_cfg>`,
// the host pass does not. Flavour "test" (rustc without LLVM Offload): the
// device images are packaged by llvm-offload-binary, embedded into a host object
// by clang, and linked by the host pass through clang's linker wrapper with
// -Zoffload=Test. Flavour "native": -Zoffload=Device / -Zoffload=Host=<abs>/host.out.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::toolchain::rustc {

namespace fs = std::filesystem;

// The crate name rustc gets: the manifest name with every other character as '_'.
std::string crate_name(std::string_view name);

// What the device pass emits for a target. Every device pass is a fat-LTO
// staticlib, so the image carries what the kernels use from the target's `core`
// and `compiler_builtins` (bounds checks, overflow checks, iterator and slice
// methods). For a GPU the emitted bitcode is the image. For the host device
// rustc writes the archive, and the device link (below) makes the image: one
// relocatable object, which is what libomptarget's host plugin loads.
std::string device_crate_type(const manifest::Target& target);   // "staticlib"
std::string device_emit_kind(const manifest::Target& target);    // "link" or "llvm-bc"
std::string device_output_suffix(const manifest::Target& target);  // ".a" or ".bc": what rustc writes
std::string device_image_suffix(const manifest::Target& target);   // ".o" or ".bc": the packaged image
bool needs_device_link(const manifest::Target& target);            // the host device: archive -> object

// Flags every device pass gets besides --target: cpu, the device cfg, codegen
// settings, fat LTO (unless `fat_lto` is false: cargo sets it by profile), and
// -Zoffload=Device in the native flavour.
std::vector<std::string> device_codegen_flags(const rust::RustToolchain& rust,
                                              const std::string& device_cfg, const manifest::Target& target,
                                              bool fat_lto = true);

// Besides its output `out`, every device pass writes its MIR (device_mir:
// the kernels' signatures, rust_mir.hpp) and, for the host device, the
// crate's own fat-LTO object (device_crate_object: the archive's first
// member), which the image link takes whole: the image has every kernel
// rustc compiled, however it was written (a macro, a proc macro, include!).
fs::path device_mir(const fs::path& out);
fs::path device_crate_object(const fs::path& out);
std::vector<std::string> device_side_emits(const manifest::Target& target, const fs::path& out);

// The host device's image: a relocatable link (clang -r) of the crate's
// object, the archive's compiler_builtins members it needs, and the stub
// (tc.rust_device_stub: rust-device-stub.ll, shipped with offload-build; shown
// by that name when unset) that defines the unwinding personality `core`
// refers to. Nothing of `std`.
std::vector<std::string> device_link(const Toolchain& tc, const manifest::Target& target,
                                     const fs::path& crate_object, const fs::path& archive, const fs::path& out);

// The host pass's MIR at `mir` (nullopt: in rustc's output directory, as
// cargo's crates write it), with each statement's file:line:column (the
// launches, rust_mir.hpp).
std::vector<std::string> host_mir_emits(const std::optional<fs::path>& mir);

// Flags the host pass needs to link the images: -Zoffload, clang as the linker
// with --offload-link, the embedded image object (flavour test), CUDA for nvptx
// images, and libomptarget with its rpath. -Clto=fat is not included.
std::vector<std::string> host_link_flags(const Toolchain& tc, const std::vector<manifest::Target>& targets,
                                         const std::optional<fs::path>& embedded_object,
                                         const std::optional<fs::path>& native_host_out);

// The driver the host pass links through (-Clinker=): the toolchain's clang.
fs::path linker(const Toolchain& tc);

// The manifest's defines as --cfg, link_flags as -Clink-arg=, libs as -l or -Clink-arg=.
std::vector<std::string> cfg_flags(const manifest::Manifest& m);
std::vector<std::string> user_link_flags(const manifest::Manifest& m);

// Paths are written into argv as given (relative to the project directory).
std::vector<std::string> device_compile(const Toolchain& tc, const manifest::Manifest& m,
                                        const fs::path& crate_root, const manifest::Target& target,
                                        const fs::path& out, const fs::path& depfile);

// An empty LLVM IR module for the package to be embedded into (argv: touch).
std::vector<std::string> embed_stub(const fs::path& stub);

// clang compiles the empty module with the package in its .llvm.offloading section.
std::vector<std::string> embed(const Toolchain& tc, const fs::path& stub, const fs::path& package,
                               const fs::path& out);

// The host pass, which also links: rustc with the host_link_flags, fat LTO;
// it writes its MIR to `mir` (host_mir_emits).
std::vector<std::string> host_link(const Toolchain& tc, const manifest::Manifest& m,
                                   const fs::path& crate_root,
                                   const std::optional<fs::path>& embedded_object,
                                   const std::optional<fs::path>& native_host_out,
                                   const fs::path& out, const fs::path& depfile,
                                   const fs::path& mir);

// Before planning a Rust build: check the crate's source for the mistakes
// read best there (rust_kernels.hpp), find the nightly rustc and its flavour (into tc.rust), print
// them under -v, and find the host device's stub. Errors say what to install or change.
Result<void> prepare(manifest::Manifest& m, Toolchain& tc, bool verbose);

// When one of `targets` needs the image link: the stub every host-device image
// is linked with (rust-device-stub.ll, shipped with offload-build) into
// tc.rust_device_stub, or an error saying where it was looked for.
Result<void> find_device_stub(const std::vector<manifest::Target>& targets, Toolchain& tc);

}  // namespace ob::toolchain::rustc
