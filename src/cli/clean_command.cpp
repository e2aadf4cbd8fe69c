// `offload-build clean [--dry-run]`: remove the manifest's build directory.
// Never the cache (a cache inside the build directory is kept), never a
// directory outside the project, never through a symbolic link.
#include <algorithm>
#include <iostream>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "offload_build/cli/commands.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"  // load_manifest, manifest_options

namespace ob::cli {

namespace {

// Whether `path` is `dir` or under it (both absolute and normal).
bool within(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end();
}

// What to remove under `dir` so that everything but `keep` goes: `dir`
// itself when `keep` is not under it, else its other entries, recursively.
void removals(const fs::path& dir, const fs::path& keep, std::vector<fs::path>& out) {
  if (!within(keep, dir)) {
    out.push_back(dir);
    return;
  }
  if (dir == keep) return;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (within(keep, it->path()) && it->is_directory(ec2) && !it->is_symlink(ec2))
      removals(it->path(), keep, out);
    else
      out.push_back(it->path());
  }
}

// Files under `p` (not following links), `p` itself counted when it is one.
size_t count_files(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(p, ec))) return 1;
  size_t n = 0;
  for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    n += !it->is_directory(ec2) || it->is_symlink(ec2);
  }
  return n;
}

}  // namespace

Result<int> clean(const Request& o) {
  const fs::path file = manifest_path(o);
  if (!fs::exists(file)) return no_manifest(file);
  auto m = manifest::load_manifest(file, toolchain::frontend::manifest_options());
  if (!m) return m.error();
  std::error_code ec;
  const fs::path build = fs::absolute(m->build_dir, ec).lexically_normal();
  if (fs::is_symlink(build, ec))
    return Error::usage(fmt::format("build_dir {} is a symbolic link; clean removes only a real "
                                    "directory: remove the link or its target by hand",
                                    build.string()));
  if (!fs::exists(fs::symlink_status(build, ec))) {
    std::cout << fmt::format("nothing to clean: {} does not exist\n", build.string());
    return exit_code::ok;
  }
  const fs::path real_build = fs::canonical(build, ec);
  const fs::path project = fs::canonical(m->project_dir, ec);
  if (ec || real_build == project || !within(real_build, project) ||
      within(fs::weakly_canonical(file, ec), real_build))
    return Error::usage(fmt::format(
        "{}: build_dir {} is not a directory inside the project {} (without the manifest); clean "
        "removes nothing there: remove the build outputs by hand",
        file.string(), build.string(), project.string()));
  const fs::path cache = fs::weakly_canonical(cache_dir_for(o.config, m->cache_dir), ec);
  if (within(real_build, cache))
    return Error::usage(fmt::format("build_dir {} is inside the cache directory {}; clean removes "
                                    "nothing there (`offload-build cache clear` empties the cache)",
                                    build.string(), cache.string()));
  std::vector<fs::path> remove;
  removals(real_build, cache, remove);
  if (within(cache, real_build))
    std::cout << fmt::format("keeping the cache directory {} (inside the build directory)\n", cache.string());
  for (const auto& p : remove) {
    const size_t files = count_files(p);
    if (o.dry_run) {
      std::cout << fmt::format("would remove {} ({} file{})\n", p.string(), files, files == 1 ? "" : "s");
      continue;
    }
    fs::remove_all(p, ec);
    if (ec)
      return Error::failure(fmt::format("cannot remove {}: {}; the rest of the build directory "
                                        "may be left: check its permissions",
                                        p.string(), ec.message()));
    std::cout << fmt::format("removed {} ({} file{})\n", p.string(), files, files == 1 ? "" : "s");
  }
  return exit_code::ok;
}

}  // namespace ob::cli
