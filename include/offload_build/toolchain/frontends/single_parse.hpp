// The single-parse form of a C/C++ device pass. The clang driver's device-only
// compile (`--offload-device-only`) first parses the source for the host to
// get the host IR (kernel names and order), then parses it again for the
// target. When several targets build one TU, and again in the host pass, the
// host parse is repeated. Split out of the driver's own command list
// (`clang -###`), the host-IR step runs once per TU and every device pass and
// the host codegen read its output, as the one-shot driver does internally.
#pragma once

#include <string>
#include <vector>

#include "offload_build/toolchain/frontends/driver_listing.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain::single_parse {

using driver_listing::Argv;

// The paths of one TU's device pass as written into its commands.
struct UnitPaths {
  std::string source;    // the source argument
  std::string output;    // the device object (the driver command's -o)
  std::string depfile;   // the driver command's -MF
  std::string host_ir;   // where the host IR goes (the driver uses a temporary)
  std::string assembly;  // nvptx: the PTX the device cc1 writes for ptxas
};

// One device pass as the commands the driver runs, with the probed TU's paths
// replaced by placeholders so that one probe serves every TU with the same flags:
//   host_ir:  cc1 parsing the source for the host, writing bitcode to host_ir
//             (checked, not run: the planners run the host pass's own parse,
//             `--offload-host-only -emit-llvm`, which names every target)
//   device:   cc1 for the target reading host_ir, writing output (or assembly)
//   assemble: ptxas, assembly -> output (nvptx only; empty otherwise)
struct DevicePass {
  Argv host_ir;
  Argv device;
  Argv assemble;
};

// From the `-###` listing of the device pass of a TU with paths `probed`.
// An error says why the listing has another shape (extra steps from flags such
// as -save-temps, a driver that already differs...): keep the two-parse form.
// `shared`: the pass will serve other TUs, so no argument may embed one of
// the probed TU's paths (e.g. -split-dwarf-file); launcher mode splits one
// compile and passes false.
Result<DevicePass> templatize(const std::vector<Argv>& listing, const UnitPaths& probed,
                              bool shared = true);

// The target features the pass's device cc1 compiles for (its
// `-target-feature` values, in order): what the driver's packager records
// in the image under offload LTO.
std::vector<std::string> target_features(const DevicePass& pass);

// `argv` of a templatized pass with `unit`'s paths.
Argv instantiate(const Argv& argv, const UnitPaths& unit);

}  // namespace ob::toolchain::single_parse
