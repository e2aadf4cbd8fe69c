#include "offload_build/toolchain/frontends/single_parse.hpp"

#include "single_parse_shapes.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/core.h>

#include "offload_build/util/strings.hpp"

namespace ob::toolchain::single_parse {

namespace {

constexpr const char* kSource = "<@source>";
constexpr const char* kMain = "<@main-file>";
constexpr const char* kOutput = "<@output>";
constexpr const char* kDepfile = "<@depfile>";
constexpr const char* kHostIr = "<@host-ir>";
constexpr const char* kAssembly = "<@assembly>";

bool has(const Argv& argv, std::string_view arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

// The argument after the first `flag`, or "".
std::string value_after(const Argv& argv, std::string_view flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? std::string{} : *(it + 1);
}

bool is_cc1(const Argv& argv, std::string_view frontend = "-cc1") { return argv.size() > 1 && argv[1] == frontend; }

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

bool any_starts_with(const Argv& argv, std::string_view prefix) {
  return std::any_of(argv.begin(), argv.end(),
                     [&](const std::string& a) { return util::starts_with(a, prefix); });
}

// Whether cc1 tracks source locations without debug info (clang's
// NeedLocTracking: remarks, optimization records, a sample profile,
// -fstack-usage): its IR then has a DIFile naming the compilation directory,
// which an -foffload-lto device object keeps.
bool tracks_locations(const Argv& argv) {
  return any_starts_with(argv, "-Rpass") || any_starts_with(argv, "-opt-record-file") ||
         any_starts_with(argv, "-fprofile-sample-use") || any_starts_with(argv, "-stack-usage-file");
}

// The driver names the working directory for debug info and coverage even
// when neither is on; cc1 then does not use it (without it, a DIFile's
// directory would be ""). Left out then, the command (the cache key) is the
// same from any build directory.
Argv without_unused_compilation_dirs(Argv argv) {
  const bool debug = any_starts_with(argv, "-debug-info-kind=") || tracks_locations(argv);
  const bool coverage = any_starts_with(argv, "-fcoverage-mapping") ||
                        any_starts_with(argv, "-fprofile-instrument");
  std::erase_if(argv, [&](const std::string& a) {
    return (!debug && util::starts_with(a, "-fdebug-compilation-dir=")) ||
           (!coverage && util::starts_with(a, "-fcoverage-compilation-dir="));
  });
  return argv;
}

Error shape(const std::string& what) {
  return Error::failure("the driver's device pass has an unexpected shape: " + what);
}

}  // namespace

Result<DevicePass> templatize(const std::vector<Argv>& listing, const UnitPaths& probed,
                              bool shared) {
  return templatize(listing, probed, shared, Shape::Clang);
}

Result<DevicePass> templatize(const std::vector<Argv>& listing, const UnitPaths& probed, bool shared,
                              Shape kind) {
  const std::string_view fc = kind == Shape::Clang ? "-cc1" : "-fc1";
  if (listing.size() != 2 && listing.size() != 3)
    return shape(fmt::format("{} commands (expected the host-IR cc1, the device cc1 and, for "
                             "nvptx, ptxas)",
                             listing.size()));
  DevicePass pass{listing[0], without_unused_compilation_dirs(listing[1]),
                  listing.size() == 3 ? listing[2] : Argv{}};
  // clang's host-IR cc1 writes unoptimized bitcode and a depfile; flang's
  // -fc1 writes its bitcode as the one-shot compile's first command does.
  if (!is_cc1(pass.host_ir, fc) || !has(pass.host_ir, "-emit-llvm-bc") ||
      (kind == Shape::Clang &&
       (!has(pass.host_ir, "-disable-llvm-passes") || !has(pass.host_ir, "-dependency-file"))))
    return shape("the first command is not a host cc1 writing unoptimized bitcode and a depfile");
  const std::string host_ir = value_after(pass.host_ir, "-o");
  if (!is_cc1(pass.device, fc) || host_ir.empty() ||
      value_after(pass.device, "-fopenmp-host-ir-file-path") != host_ir)
    return shape("the second command is not a device cc1 reading the host IR");
  std::string assembly;
  if (!pass.assemble.empty()) {
    assembly = value_after(pass.device, "-o");
    if (value_after(pass.assemble, "--output-file") != probed.output || !has(pass.assemble, assembly))
      return shape("the third command does not assemble the device cc1's output");
  } else if (value_after(pass.device, "-o") != probed.output) {
    return shape("the device cc1 does not write the requested object");
  }

  std::map<std::string, std::string> names{{probed.source, kSource},
                                           {probed.output, kOutput},
                                           {probed.depfile, kDepfile},
                                           {host_ir, kHostIr}};
  if (!assembly.empty()) names.emplace(assembly, kAssembly);
  const std::string main_file = base_name(probed.source);
  for (Argv* argv : {&pass.host_ir, &pass.device, &pass.assemble}) {
    for (size_t i = 0; i < argv->size(); ++i) {
      std::string& arg = (*argv)[i];
      if (i > 0 && (*argv)[i - 1] == "-main-file-name" && arg == main_file) {
        arg = kMain;
      } else if (auto it = names.find(arg); it != names.end()) {
        arg = it->second;
      } else if (shared) {
        // A path of this TU anywhere else (a -split-dwarf-file, a -fprofile
        // path...) would leak into other TUs' commands: not safe to share.
        for (const auto& [path, placeholder] : names)
          if (arg.find(path) != std::string::npos)
            return shape(fmt::format("argument '{}' embeds '{}'", arg, path));
      }
    }
  }
  return pass;
}

std::vector<std::string> target_features(const DevicePass& pass) {
  std::vector<std::string> features;
  for (size_t i = 0; i + 1 < pass.device.size(); ++i)
    if (pass.device[i] == "-target-feature") features.push_back(pass.device[i + 1]);
  return features;
}

Argv instantiate(const Argv& argv, const UnitPaths& unit) {
  const std::map<std::string_view, std::string> values{
      {kSource, unit.source},   {kMain, base_name(unit.source)}, {kOutput, unit.output},
      {kDepfile, unit.depfile}, {kHostIr, unit.host_ir},         {kAssembly, unit.assembly}};
  Argv out;
  out.reserve(argv.size());
  for (const auto& arg : argv) {
    auto it = values.find(arg);
    out.push_back(it == values.end() ? arg : it->second);
  }
  return out;
}

}  // namespace ob::toolchain::single_parse
