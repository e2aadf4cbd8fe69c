// The clang OpenMP-offload frontend: C and C++ through the clang driver.
#include "clang_compiles.hpp"
#include "offload_build/toolchain/frontends/clang_flags.hpp"

namespace ob::frontend {

namespace {

class ClangOpenMp final : public Frontend {
 public:
  std::string_view name() const override { return "clang OpenMP offload"; }

  std::unique_ptr<Compile> manifest_compile(const Toolchain& tc, const Manifest& m,
                                            const SourceFile& src,
                                            const fs::path& src_arg) const override {
    return clang_openmp::manifest_compile(tc, m, src, src_arg);
  }

  std::unique_ptr<Compile> launcher_compile(const clang_cli::CompileRequest& req,
                                            const fs::path& cwd,
                                            const std::string& record) const override {
    return clang_cli::launcher_compile(req, cwd, record);
  }

  Argv package(const Toolchain& tc, const std::vector<Image>& images,
               const fs::path& out) const override {
    return clang_openmp::package(tc, images, out);
  }

  Argv link(const Toolchain& tc, const Manifest& m, const std::vector<fs::path>& objects,
            const fs::path& out, const fs::path& depfile) const override {
    return clang_openmp::link(tc, m, objects, out, depfile);
  }

  // The `--offload-device-only` listing: host-IR cc1, device cc1, ptxas for nvptx.
  Result<single_parse::DevicePass> split_device_pass(const std::vector<Argv>& listing,
                                                     const single_parse::UnitPaths& probed,
                                                     bool shared) const override {
    return single_parse::templatize(listing, probed, shared);
  }
};

}  // namespace

ManifestOptions manifest_options() { return {clang_flags::target_flag_problem}; }

const Frontend& for_language(Language lang) {
  static const ClangOpenMp clang;
  (void)lang;  // C and C++; a Rust crate has its own planner (rust_planner.cpp)
  return clang;
}

}  // namespace ob::frontend
