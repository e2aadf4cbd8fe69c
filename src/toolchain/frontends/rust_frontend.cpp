// rustc's std::offload as a RustFrontend (rust_frontend.hpp): each pass's
// argv from rustc.hpp (a manifest's crate) and cargo.hpp (`offload-build cargo`).
#include "offload_build/toolchain/frontends/rust_frontend.hpp"

#include "offload_build/toolchain/frontends/rustc.hpp"

namespace ob::toolchain::frontend {

namespace {

class Rustc final : public RustFrontend {
 public:
  std::string_view name() const override { return "rustc std::offload"; }
  bool compiles(manifest::Language lang) const override { return lang == manifest::Language::Rust; }

  std::string device_output_suffix(const manifest::Target& t) const override { return rustc::device_output_suffix(t); }
  std::string device_image_suffix(const manifest::Target& t) const override { return rustc::device_image_suffix(t); }
  bool needs_image_link(const manifest::Target& t) const override { return rustc::needs_device_link(t); }
  bool host_reads_package(const Toolchain& tc) const override {
    return tc.rust && tc.rust->flavour == rust::Flavour::Native;
  }

  Argv device(const Toolchain& tc, const manifest::Manifest& m, const fs::path& crate_root, const manifest::Target& t,
              const fs::path& out, const fs::path& depfile) const override {
    return rustc::device_compile(tc, m, crate_root, t, out, depfile);
  }
  fs::path device_mir(const fs::path& out) const override { return rustc::device_mir(out); }
  std::vector<fs::path> device_side_outputs(const manifest::Target& t, const fs::path& out) const override {
    std::vector<fs::path> side{rustc::device_mir(out)};
    if (rustc::needs_device_link(t)) side.push_back(rustc::device_crate_object(out));
    return side;
  }
  Argv image_link(const Toolchain& tc, const manifest::Target& t, const fs::path& crate_object,
                  const fs::path& archive, const fs::path& out) const override {
    return rustc::device_link(tc, t, crate_object, archive, out);
  }

  Argv package(const Toolchain& tc, const std::vector<Image>& images,
               const fs::path& out) const override {
    return clang_openmp::package(tc, images, out);
  }
  Argv stub(const fs::path& stub) const override { return rustc::embed_stub(stub); }
  Argv embed(const Toolchain& tc, const fs::path& stub, const fs::path& package,
             const fs::path& out) const override {
    return rustc::embed(tc, stub, package, out);
  }
  Argv host(const Toolchain& tc, const manifest::Manifest& m, const fs::path& crate_root,
            const std::optional<fs::path>& embedded, const std::optional<fs::path>& package,
            const fs::path& out, const fs::path& depfile, const fs::path& mir) const override {
    return rustc::host_link(tc, m, crate_root, embedded, package, out, depfile, mir);
  }
  fs::path link_driver(const Toolchain& tc) const override { return rustc::linker(tc); }

  cargo::Invocation cargo_device(const fs::path& cargo, const Toolchain& tc, const cargo::Package& p,
                                 const cargo::UserArgs& user, const manifest::Target& t,
                                 const cargo::DeviceInputs& in) const override {
    return cargo::device_pass(cargo, tc, p, user, t, in);
  }
  cargo::Invocation cargo_host(const fs::path& cargo, const Toolchain& tc, const cargo::Package& p,
                               const cargo::UserArgs& user, const std::vector<manifest::Target>& targets,
                               const std::optional<fs::path>& embedded, const std::optional<fs::path>& package,
                               const std::vector<std::string>& user_rustflags) const override {
    return cargo::host_pass(cargo, tc, p, user, targets, embedded, package, user_rustflags);
  }
  cargo::Invocation cargo_device_check(const fs::path& cargo, const fs::path& clippy, const Toolchain& tc,
                                       const cargo::Package& p, const cargo::UserArgs& user, const manifest::Target& t,
                                       const cargo::DeviceInputs& in) const override {
    return cargo::device_check(cargo, clippy, tc, p, user, t, in);
  }
  cargo::Invocation cargo_host_check(const fs::path& cargo, const fs::path& clippy, const Toolchain& tc,
                                     const cargo::Package& p, const cargo::UserArgs& user,
                                     const std::vector<std::string>& user_rustflags) const override {
    return cargo::host_check(cargo, clippy, tc, p, user, user_rustflags);
  }
};

// The Rust chain's frontends: a new one is a line here (and its file).
const std::vector<const RustFrontend*>& registered() {
  static const Rustc rustc;
  static const std::vector<const RustFrontend*> all{&rustc};
  return all;
}

}  // namespace

const RustFrontend* rust_for_language(manifest::Language lang) {
  for (const RustFrontend* fe : registered())
    if (fe->compiles(lang)) return fe;
  return nullptr;
}

}  // namespace ob::toolchain::frontend
