// Sizes as people write them: "5G", "500M", "1.5GiB", "1024" (bytes), "64K".
#pragma once

#include <cstdint>
#include <string_view>

#include "offload_build/util/result.hpp"

namespace ob::util {

// Units are binary whatever the spelling: K/KiB/KB = 1024, M = 2^20, G = 2^30,
// T = 2^40 (case-insensitive); a fraction rounds down to whole bytes.
Result<uint64_t> parse_size(std::string_view text);

}  // namespace ob::util
