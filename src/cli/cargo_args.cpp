#include "cargo_args.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/strings.hpp"
#include "options.hpp"

namespace ob::cli::cargo_args {

namespace {

// offload-build's options that cargo build|run has too: after `cargo` they are cargo's.
constexpr std::array kCargosToo = {"-h", "--help", "-v", "--verbose", "-q", "--quiet", "-j", "--jobs", "--color", "--target", "--timings"};

const CLI::Option* option(const std::string& name) {
  static CLI::App app;
  static Request options;
  static const bool ready = (add_global_options(app, options), true);
  (void)ready;
  return app.get_option_no_throw(name);
}

bool cargos_too(const std::string& name) {
  return std::find(kCargosToo.begin(), kCargosToo.end(), name) != kCargosToo.end();
}

// `--target sm_90` after `cargo`: an offload target where cargo wants a triple.
bool offload_target(const std::string& value) {
  return value.find('-') == std::string::npos && resolve_target(value).ok();
}

}  // namespace

bool takes_value(const std::string& a) {
  const CLI::Option* opt = option(a);
  return opt && opt->get_expected_min() > 0;
}

Result<CargoArgs> parse(const CommandLine& line, const std::vector<std::string>& args) {
  if (args.empty() || (args[0] != "build" && args[0] != "run"))
    return Error::usage("offload-build cargo runs cargo build or cargo run: write `offload-build cargo "
                        "build [--release] [CARGO ARGS]` or `offload-build cargo run [--verify] [CARGO ARGS] "
                        "[-- ARGS]`");
  CargoArgs out;
  out.run = args[0] == "run";
  std::vector<std::string> moved, named;
  bool target = false;
  size_t i = 1;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    if (a == "--verify") {
      if (!out.run)
        return Error::usage("--verify goes with run: it runs the program to prove a kernel ran on an offload "
                            "device (`cargo run --verify`)");
      out.verify = true;
      continue;
    }
    const size_t eq = a.find('=');
    const bool attached = a.size() > 2 && a[0] == '-' && a[1] != '-' && takes_value(a.substr(0, 2));  // -Cdir
    const std::string name = attached ? a.substr(0, 2) : a.substr(0, eq);
    const bool ours = a.size() > 1 && a[0] == '-' && option(name);
    const bool has_next = eq == std::string::npos && !attached && takes_value(name) && i + 1 < args.size();
    const std::string value = eq != std::string::npos ? a.substr(eq + 1) : has_next ? args[i + 1] : "";
    if (!ours || (cargos_too(name) && !(name == "--target" && offload_target(value)))) {
      out.cargo.push_back(a);
      continue;
    }
    target = target || name == "--target";
    named.push_back(name);
    moved.push_back(a);
    if (has_next) moved.push_back(args[++i]);
  }
  if (i < args.size()) out.program.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  if (moved.empty()) return out;

  std::vector<std::string> fixed = line.head;
  fixed.insert(fixed.end(), line.ours.begin(), line.ours.end());
  fixed.insert(fixed.end(), moved.begin(), moved.end());
  fixed.insert(fixed.end(), line.mid.begin(), line.mid.end());
  fixed.push_back(args[0]);
  if (out.verify) fixed.push_back("--verify");
  fixed.insert(fixed.end(), out.cargo.begin(), out.cargo.end());
  if (i < args.size()) fixed.insert(fixed.end(), args.begin() + static_cast<long>(i), args.end());
  const std::string before = line.mid.empty() ? args[0] : line.mid.back();
  return Error::usage(fmt::format(
      "{} {} offload-build's, not cargo's: {} before `{}`{}:\n  {}", util::join(named, ", "),
      named.size() == 1 ? "is" : "are", named.size() == 1 ? "it goes" : "they go", before,
      target ? " (after it, --target is cargo's and names a Rust target triple)" : "", util::shell_join(fixed)));
}

}  // namespace ob::cli::cargo_args
