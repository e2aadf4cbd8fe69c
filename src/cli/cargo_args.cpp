#include "cargo_args.hpp"

#include <algorithm>
#include <array>
#include <optional>

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
  return value.find('-') == std::string::npos && manifest::resolve_target(value).ok();
}

}  // namespace

bool takes_value(const std::string& a) {
  const CLI::Option* opt = option(a);
  return opt && opt->get_expected_min() > 0;
}

std::string usage(const std::string& head, const std::string& mid) {
  const std::string u = head + " [OFFLOAD-BUILD OPTIONS]" + mid;
  return fmt::format(
      "{0}{2}: build, run, test and check a cargo project whose kernels use std::offload: the device\n"
      "pass per kernel crate and offload target, the images packaged, the host pass through cargo\n"
      "linked by LLVM's linker wrapper (docs/RUST.md, \"cargo projects\").\n"
      "\n"
      "Usage: {1} build [CARGO ARGS]\n"
      "       {1} run [--verify] [CARGO ARGS] [-- PROGRAM ARGS]\n"
      "       {1} test [CARGO ARGS] [-- TEST ARGS]\n"
      "       {1} check|clippy [CARGO ARGS] [-- LINT ARGS]\n"
      "       {1} clean|doc [CARGO ARGS]            (cargo's own, with the same toolchain)\n"
      "test runs the tests with OMP_TARGET_OFFLOAD=MANDATORY; check and clippy check both sides,\n"
      "the device side with --cfg offload_device per kernel crate and target, then the host.\n"
      "\n"
      "After the command word everything is cargo's (--release, --profile, -p, --bin, --features,\n"
      "--manifest-path, ...), except --verify (run only: prove a kernel ran on an offload device).\n"
      "offload-build's own options go before `cargo` (`cargo offload`: before the command word):\n"
      "  --target T[,T...]   offload targets (host, sm_90, gfx90a...); default: the package's\n"
      "                      [package.metadata.offload] targets, else host\n"
      "  -C DIR              run in DIR\n"
      "  -v, --verbose       print every command\n"
      "  --dry-run           print the commands, run nothing\n"
      "  --explain           say why each pass was not served from the cache\n"
      "  --timings[=FILE], --trace FILE, --report FILE, --no-cache, --cache-dir DIR, ...\n"
      "  (`offload-build --help` lists them all)\n"
      "The rustc: $RUSTC, else the toolchain you pinned (cargo +TOOLCHAIN offload, rust-toolchain.toml,\n"
      "$RUSTUP_TOOLCHAIN), else the rustup nightly; it must be a nightly with -Zoffload.\n"
      "\n"
      "Examples:\n"
      "  {0}{2} run --release --verify   # prove a kernel ran on the offload device\n"
      "  {0}{2} test --release\n",
      head, u, mid);
}

namespace {

// cargo's own aliases of the commands offload-build drives.
std::string unalias(const std::string& word) {
  if (word == "b") return "build";
  if (word == "r") return "run";
  if (word == "t") return "test";
  if (word == "c") return "check";
  return word;
}

// The command `word` is one letter away from (a typo), or "".
std::string near_command(const std::string& word) {
  for (const char* c : {"build", "run", "test", "check", "clippy"}) {
    const std::string cmd = c;
    const size_t n = word.size(), m = cmd.size();
    std::vector<size_t> prev(m + 1), cur(m + 1);
    for (size_t j = 0; j <= m; ++j) prev[j] = j;
    for (size_t i = 1; i <= n; ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= m; ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (word[i - 1] == cmd[j - 1] ? 0 : 1)});
      prev.swap(cur);
    }
    if (prev[m] <= 2 && n > 1) return cmd;
  }
  return "";
}

}  // namespace

bool is_command(const std::string& word) {
  const std::string w = unalias(word);
  return w == "build" || w == "run" || w == "test" || w == "check" || w == "clippy" || w == "clean" || w == "doc";
}

std::optional<std::string> misplaced_cargo_option(const std::vector<std::string>& head,
                                                  const std::vector<std::string>& before,
                                                  const std::vector<std::string>& mid,
                                                  const std::vector<std::string>& after) {
  std::vector<std::string> ours, cargos;
  for (size_t i = 0; i < before.size(); ++i) {
    const std::string& a = before[i];
    const std::string name = a.substr(0, a.find('='));
    if (a.size() < 2 || a[0] != '-' || option(name) || (a[1] != '-' && takes_value(a.substr(0, 2)))) {
      ours.push_back(a);
      if (a.find('=') == std::string::npos && takes_value(name) && i + 1 < before.size()) ours.push_back(before[++i]);
      continue;
    }
    cargos.push_back(a);
    // cargo's options with a value: the value follows it.
    static const std::array with_value = {"-p", "--package", "--profile", "--features", "-F", "--bin", "--example",
                                          "--test", "--bench", "--manifest-path", "--config", "-Z", "--target-dir"};
    if (a.find('=') == std::string::npos && std::find(with_value.begin(), with_value.end(), a) != with_value.end() &&
        i + 1 < before.size())
      cargos.push_back(before[++i]);
  }
  if (cargos.empty() || after.empty() || !is_command(after.front())) return std::nullopt;
  std::vector<std::string> fixed = head;
  fixed.insert(fixed.end(), ours.begin(), ours.end());
  fixed.insert(fixed.end(), mid.begin(), mid.end());
  fixed.push_back(after.front());
  fixed.insert(fixed.end(), cargos.begin(), cargos.end());
  fixed.insert(fixed.end(), after.begin() + 1, after.end());
  const bool one = cargos.size() == 1 || (cargos.size() == 2 && cargos[1][0] != '-');
  return fmt::format("{} {} cargo's, not offload-build's: {} after `{}`:\n  {}", util::join(cargos, " "),
                     one ? "is" : "are", one ? "it goes" : "they go", after.front(), util::shell_join(fixed));
}

Result<CargoArgs> parse(const CommandLine& line, const std::vector<std::string>& args) {
  if (!args.empty() && !is_command(args[0]) && !near_command(args[0]).empty())
    return Error::usage(fmt::format("no such command `{}`: did you mean `{}`? (offload-build cargo runs build, "
                                    "run, test, check and clippy; b, r, t and c as cargo spells them)",
                                    args[0], near_command(args[0])));
  if (args.empty() || !is_command(args[0]))
    return Error::usage("offload-build cargo runs cargo build, run, test, check or clippy: write `offload-build "
                        "cargo build [--release] [CARGO ARGS]` or `offload-build cargo run [--verify] [CARGO ARGS] "
                        "[-- ARGS]` (`offload-build cargo --help`)");
  CargoArgs out;
  out.command = unalias(args[0]);
  out.run = out.command == "run";
  std::vector<std::string> moved, named;
  bool target = false;
  size_t i = 1;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    if (a == "--verify") {
      if (!out.run)
        return Error::usage("--verify goes with run (not " + out.command + "): it runs the program to prove a kernel ran on an offload "
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
