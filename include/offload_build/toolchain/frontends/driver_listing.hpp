// Reading what `clang -###` prints: the commands the driver would run, one per
// line, each argument in double quotes with \ " and $ escaped by a backslash.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::driver_listing {

using Argv = std::vector<std::string>;

// Every command line of a `-###` listing (lines starting with ` "`); the
// version banner, "Target:", "InstalledDir:" and other lines are skipped.
// An unterminated quote is an error naming the line.
Result<std::vector<Argv>> parse(std::string_view listing);

// For a listed device cc1 (-fopenmp-is-target-device), the target it
// compiles for (its -triple and -target-cpu; "generic" for the host device
// or without a cpu); nullopt for any other command.
std::optional<manifest::Target> device_cc1_target(const Argv& argv);

// What a listed command writes: its output and, for cc1, the files named
// after it (the depfile, the optimization record).
std::vector<std::string> written_by(const Argv& argv);

// Whether a listed command packages device images (llvm-offload-binary).
bool packages(const Argv& argv);
// Whether a listed command assembles (ptxas, or clang's integrated assembler
// `clang -cc1as`).
bool assembles(const Argv& argv);

// A listed command's output (-o, ptxas's --output-file); empty when none.
std::string output_of(const Argv& argv);

}  // namespace ob::toolchain::driver_listing
