// Identity of a program or file without reading it: resolved path, size and
// modification time (ccache's "mtime" compiler check). A different binary at
// the same path differs; package managers keep file mtimes, so identical
// installations on two machines agree.
#pragma once

#include <filesystem>
#include <string>

namespace ob::util {

std::string file_identity(const std::filesystem::path& path);

}  // namespace ob::util
