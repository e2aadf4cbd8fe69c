// The Rust (std::offload) frontend: the argv of each pass of a crate's
// build, for a manifest's crate and for `offload-build cargo` alike. The
// planners (src/plan/rust_planner.cpp, cargo_planner.cpp, both through
// rust_chain.hpp) lay out the jobs and their files and ask it for each
// command: the device pass per target, the host device's image link, the
// package, the stub and embed (test flavour), and the host pass that links.
// Its one implementation is rustc's (rust_frontend.cpp), which hands the
// flags to rustc.hpp and cargo.hpp, the only code that knows them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/frontends/cargo.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/frontend_base.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::toolchain::frontend {

namespace fs = std::filesystem;

class RustFrontend : public FrontendBase {
 public:
  using Argv = std::vector<std::string>;

  // What a device pass for `t` writes (".a": the host device's archive, or
  // ".bc": a GPU's bitcode), and the image packaged from it (".o" or ".bc").
  virtual std::string device_output_suffix(const manifest::Target& t) const = 0;
  virtual std::string device_image_suffix(const manifest::Target& t) const = 0;
  // Whether the device pass's output becomes the image through image_link.
  virtual bool needs_image_link(const manifest::Target& t) const = 0;
  // Whether the host pass reads the package itself (<dir>/host.out, the
  // native flavour); when not, it links an object the package is embedded
  // into (stub, then embed).
  virtual bool host_reads_package(const Toolchain& tc) const = 0;

  // A manifest crate (paths as argv names them): the device pass for `t`.
  virtual Argv device(const Toolchain& tc, const manifest::Manifest& m, const fs::path& crate_root,
                      const manifest::Target& t, const fs::path& out, const fs::path& depfile) const = 0;
  // What a device pass writes besides `out` (paths as argv names them): its
  // MIR, and for the host device the crate's object the image link takes.
  virtual fs::path device_mir(const fs::path& out) const = 0;
  virtual std::vector<fs::path> device_side_outputs(const manifest::Target& t, const fs::path& out) const = 0;
  // The host device's image from a device pass's `out` (the archive) and the
  // crate's object it wrote beside it (device_side_outputs).
  virtual Argv image_link(const Toolchain& tc, const manifest::Target& t, const fs::path& crate_object,
                          const fs::path& archive, const fs::path& out) const = 0;

  // One crate's device images as one package.
  virtual Argv package(const Toolchain& tc, const std::vector<Image>& images,
                       const fs::path& out) const = 0;
  // The empty module the package is embedded into, and the embed.
  virtual Argv stub(const fs::path& stub) const = 0;
  virtual Argv embed(const Toolchain& tc, const fs::path& stub, const fs::path& package,
                     const fs::path& out) const = 0;
  // A manifest crate's host pass, which links: with the object embedding
  // the package, or the package itself (host_reads_package); it writes its
  // MIR (the launches, rust_mir.hpp) to `mir`.
  virtual Argv host(const Toolchain& tc, const manifest::Manifest& m, const fs::path& crate_root,
                    const std::optional<fs::path>& embedded, const std::optional<fs::path>& package,
                    const fs::path& out, const fs::path& depfile, const fs::path& mir) const = 0;
  // The driver the host pass links through (a program whose identity decides it).
  virtual fs::path link_driver(const Toolchain& tc) const = 0;

  // `offload-build cargo`: the same passes through cargo.
  virtual cargo::Invocation cargo_device(const fs::path& cargo, const Toolchain& tc, const cargo::Package& p,
                                         const cargo::UserArgs& user, const manifest::Target& t,
                                         const cargo::DeviceInputs& in) const = 0;
  virtual cargo::Invocation cargo_host(const fs::path& cargo, const Toolchain& tc, const cargo::Package& p,
                                       const cargo::UserArgs& user, const std::vector<manifest::Target>& targets,
                                       const std::optional<fs::path>& embedded,
                                       const std::optional<fs::path>& package,
                                       const std::vector<std::string>& user_rustflags) const = 0;
  // cargo check|clippy: the device side per target, and the host side.
  virtual cargo::Invocation cargo_device_check(const fs::path& cargo, const fs::path& clippy, const Toolchain& tc,
                                               const cargo::Package& p, const cargo::UserArgs& user,
                                               const manifest::Target& t, const cargo::DeviceInputs& in) const = 0;
  virtual cargo::Invocation cargo_host_check(const fs::path& cargo, const fs::path& clippy, const Toolchain& tc,
                                             const cargo::Package& p, const cargo::UserArgs& user,
                                             const std::vector<std::string>& user_rustflags) const = 0;
};

// The registered frontend whose crates are built by the Rust chain and that
// compiles `lang` (Rust: rustc's); nullptr when none does.
const RustFrontend* rust_for_language(manifest::Language lang);

}  // namespace ob::toolchain::frontend
