#include "offload_build/util/files.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/core.h>

namespace ob::util {

namespace fs = std::filesystem;

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Result<void> write_file_atomic(const fs::path& target, std::string_view data) {
  static std::atomic<unsigned> counter{0};
  const fs::path tmp = target.parent_path() / fmt::format(".{}.ob-tmp-{}-w{}", target.filename().string(),
                                                          getpid(), counter++);
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return Error::failure("cannot write a temporary file next to it");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return Error::failure(why);
  }
  return {};
}

}  // namespace ob::util
