// Make-style depfiles (clang -MD, rustc --emit=dep-info, ld --dependency-file).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ob::cache {

// The prerequisites of every rule in `text`, in order, without duplicates.
// Handles line continuations, escaped spaces ("\ ") and "$$".
std::vector<std::string> parse_depfile(std::string_view text);

}  // namespace ob::cache
