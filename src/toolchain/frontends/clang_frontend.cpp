// The clang OpenMP-offload frontend: C and C++ through the clang driver.
#include "clang_compiles.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/clang_flags.hpp"
#include "offload_build/toolchain/frontends/clang_scan.hpp"

namespace ob::toolchain::frontend {

namespace {

class ClangOpenMp final : public Frontend {
 public:
  std::string_view name() const override { return "clang OpenMP offload"; }

  bool compiles(manifest::Language lang) const override {
    return lang == manifest::Language::C || lang == manifest::Language::Cxx;
  }

  bool recognizes(const fs::path& program) const override { return clang_cli::is_clang(program); }

  Parsed parse(const Argv& argv) const override { return clang_cli::parse(argv); }

  BuildParsed parse_build(const Argv& argv) const override { return clang_cli::parse_build(argv); }

  LinkParsed parse_link(const Argv& argv) const override { return clang_cli::parse_link(argv); }

  std::unique_ptr<Compile> manifest_compile(const Toolchain& tc, const manifest::Manifest& m,
                                            const manifest::SourceFile& src,
                                            const fs::path& src_arg) const override {
    return clang_openmp::manifest_compile(tc, m, src, src_arg);
  }

  std::unique_ptr<Compile> launcher_compile(const CompileRequest& req,
                                            const fs::path& cwd,
                                            const std::string& record) const override {
    return clang_cli::launcher_compile(req, cwd, record);
  }

  Argv package(const Toolchain& tc, const std::vector<Image>& images,
               const fs::path& out) const override {
    return clang_openmp::package(tc, images, out);
  }

  Argv link(const Toolchain& tc, const manifest::Manifest& m, const std::vector<fs::path>& objects,
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

manifest::ManifestOptions manifest_options() { return {clang_flags::target_flag_problem}; }

BuildParsed Frontend::parse_build(const Argv&) const { return {}; }

LinkParsed Frontend::parse_link(const Argv&) const { return {std::nullopt, "links are cached for clang alone"}; }

std::optional<DriverArgv> Frontend::driver_argv(const Argv& argv, const fs::path& cwd, const fs::path& compiler,
                                                std::string* problem, const std::optional<fs::path>& memo) const {
  auto env = clang_cli::driver_environment(compiler);
  env.memo = memo;
  return clang_cli::driver_argv(argv, cwd, env, problem);
}

Argv Frontend::relative_to_base(Argv argv, const fs::path& base, const fs::path& cwd) const {
  return clang_cli::relative_to_base(std::move(argv), base, cwd);
}

std::optional<std::string> Frontend::machine_dependent_option(const Argv& argv) const {
  return clang_cli::machine_dependent_option(argv);
}

std::optional<Argv> Frontend::dependency_scan(const Argv& argv, const std::string& depfile) const {
  return clang_cli::dependency_scan_argv(argv, depfile);
}

std::optional<scan_deps::Entry> Frontend::batch_scan(const Argv& scan) const { return clang_cli::batch_scan_of(scan); }

const Frontend& clang_openmp_frontend() {
  static const ClangOpenMp clang;
  return clang;
}

namespace {

// The registered frontends: a new compiler is one line here (and its file).
const std::vector<const Frontend*>& registered() {
  static const std::vector<const Frontend*> all{
      &clang_openmp_frontend(),
      &flang_openmp_frontend(),
  };
  return all;
}

}  // namespace

const Frontend& for_language(manifest::Language lang) {
  // A Rust crate has its own planner (rust_planner.cpp); C is clang's otherwise.
  for (const Frontend* fe : registered())
    if (fe->compiles(lang)) return *fe;
  return clang_openmp_frontend();
}

const Frontend* recognize(const fs::path& given, const std::optional<fs::path>& resolved) {
  std::error_code ec;
  const fs::path real = resolved ? fs::canonical(*resolved, ec) : fs::path();
  for (const Frontend* fe : registered())
    if (fe->recognizes(given) || (resolved && !ec && fe->recognizes(real))) return fe;
  return nullptr;
}

namespace {

// The first registered frontend's answer about `argv`.
template <class Ask>
auto first_answer(Ask ask) -> decltype(ask(clang_openmp_frontend())) {
  for (const Frontend* fe : registered())
    if (auto answer = ask(*fe)) return answer;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> machine_dependent_option(const Argv& argv) {
  return first_answer([&](const Frontend& fe) { return fe.machine_dependent_option(argv); });
}

std::optional<Argv> dependency_scan(const Argv& argv, const std::string& depfile) {
  return first_answer([&](const Frontend& fe) { return fe.dependency_scan(argv, depfile); });
}

std::optional<scan_deps::Entry> batch_scan(const Argv& scan) {
  return first_answer([&](const Frontend& fe) { return fe.batch_scan(scan); });
}

std::string driver_mode(const fs::path& program) { return clang_cli::driver_mode(program); }

}  // namespace ob::toolchain::frontend
