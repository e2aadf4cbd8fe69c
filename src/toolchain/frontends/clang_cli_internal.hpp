// Shared between the clang command-line scan (clang_cli.cpp) and the
// resolution of what it found (clang_cli_targets.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "offload_build/toolchain/frontends/clang_cli.hpp"

namespace ob::toolchain::clang_cli {

// What the scan collected besides the classified arguments.
struct Scan {
  CompileRequest req;
  int major = kDefaultLlvm;               // the LLVM of argv[0]: whose flag list reads the command
  bool compile_only = false;             // -c
  bool openmp = false;                   // -fopenmp (last of -fopenmp / -fno-openmp wins)
  std::vector<std::string> triples;      // -fopenmp-targets= / --offload-targets= entries
  std::vector<std::string> archs;        // --offload-arch= entries
  std::optional<std::string> dep_file;   // -MF
  std::vector<std::string> dep_targets;  // "-MTx" / "-MQx"
  bool dep_phony = false;                // -MP
  bool records = false;                  // optimization records on (-fsave-optimization-record...)
  std::string record_format = "yaml";    // -fsave-optimization-record=FORMAT
  std::optional<std::string> record_file;  // -foptimization-record-file=
  struct Input {
    std::string path;
    std::optional<std::string> lang;  // the -x in effect
  };
  std::vector<Input> inputs;
};

// Decide: a compile to split (targets resolved), or the reason to pass through.
Parsed finish(Scan scan);
// Decide: a compile cached as one job (parse_plain), or why it is not.
Parsed finish_plain(Scan scan);

// Whether option `t`, written alone, takes the next argument as its value
// (-I DIR, -o FILE, -x LANG, -Xclang ARG, -Xarch_NAME ARG, ...).
bool takes_separate_value(std::string_view t);

}  // namespace ob::toolchain::clang_cli
