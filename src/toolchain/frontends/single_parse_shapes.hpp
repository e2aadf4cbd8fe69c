// The device-pass listings single_parse::templatize accepts besides clang's:
// flang's (`flang -fc1`, whose host-IR command writes no depfile). Private to
// the frontends.
#pragma once

#include <vector>

#include "offload_build/toolchain/frontends/single_parse.hpp"

namespace ob::toolchain::single_parse {

enum class Shape { Clang, Flang };

Result<DevicePass> templatize(const std::vector<Argv>& listing, const UnitPaths& probed, bool shared,
                              Shape shape);

}  // namespace ob::toolchain::single_parse
