// Whole-file reads and writes shared by the stages: a file read in one piece,
// and a file replaced atomically (a temporary next to it, then one rename).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "offload_build/util/result.hpp"

namespace ob::util {

// The file's bytes; nullopt when it cannot be opened.
std::optional<std::string> read_file(const std::filesystem::path& path);

// Write `data` to `target` through ".NAME.ob-tmp-PID-wN" in the same directory
// (the name the executor's sweep of dead processes' temporaries knows) and one
// rename: a reader sees the old file or the new one, never half of one; on
// failure nothing is left behind. The error says why (not which file: the
// caller names it).
Result<void> write_file_atomic(const std::filesystem::path& target, std::string_view data);

}  // namespace ob::util
