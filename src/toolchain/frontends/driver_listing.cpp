#include "offload_build/toolchain/frontends/driver_listing.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

namespace ob::toolchain::driver_listing {

namespace {

// One command line: `"arg" "arg" ...` after the leading space.
Result<Argv> parse_line(std::string_view line, size_t number) {
  Argv argv;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    if (line[i] != '"')
      return Error::failure(fmt::format("clang -### line {}: expected a quoted argument", number));
    std::string arg;
    bool closed = false;
    for (++i; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        arg += line[++i];
      } else if (line[i] == '"') {
        closed = true;
        ++i;
        break;
      } else {
        arg += line[i];
      }
    }
    if (!closed)
      return Error::failure(fmt::format("clang -### line {}: unterminated quote", number));
    argv.push_back(std::move(arg));
  }
  return argv;
}

}  // namespace

Result<std::vector<Argv>> parse(std::string_view listing) {
  std::vector<Argv> commands;
  size_t number = 0;
  while (!listing.empty()) {
    ++number;
    size_t eol = listing.find('\n');
    std::string_view line = listing.substr(0, eol);
    listing = eol == std::string_view::npos ? std::string_view{} : listing.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() < 2 || line[0] != ' ' || line[1] != '"') continue;
    auto argv = parse_line(line.substr(1), number);
    if (!argv) return argv.error();
    commands.push_back(std::move(*argv));
  }
  return commands;
}

std::optional<manifest::Target> device_cc1_target(const Argv& argv) {
  if (std::find(argv.begin(), argv.end(), "-fopenmp-is-target-device") == argv.end())
    return std::nullopt;
  auto value_after = [&](std::string_view flag) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    return it == argv.end() || it + 1 == argv.end() ? std::string{} : *(it + 1);
  };
  const std::string triple = value_after("-triple");
  const std::string cpu = value_after("-target-cpu");
  return manifest::Target{triple, triple == manifest::kHostTriple || cpu.empty() ? "generic" : cpu};
}

std::vector<std::string> written_by(const Argv& argv) {
  std::vector<std::string> files;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-o" || a == "--output-file" || a == "-dependency-file" || a == "-opt-record-file")
      files.push_back(argv[i + 1]);
  }
  return files;
}

namespace {
std::string tool_of(const Argv& argv) {
  return argv.empty() ? std::string{} : std::filesystem::path(argv.front()).filename().string();
}
}  // namespace

bool packages(const Argv& argv) {
  const std::string tool = tool_of(argv);
  return tool == "llvm-offload-binary" || tool == "clang-offload-packager";  // its name before LLVM 20
}

bool assembles(const Argv& argv) {
  return tool_of(argv) == "ptxas" || (argv.size() > 1 && argv[1] == "-cc1as");
}

std::string output_of(const Argv& argv) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-o" || argv[i] == "--output-file") return argv[i + 1];
  return {};
}

}  // namespace ob::toolchain::driver_listing
