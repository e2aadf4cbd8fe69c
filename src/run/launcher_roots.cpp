// Launcher mode: the directories whose paths are made relative (ccache's
// base_dir) and the one kernel names are relative to (docs/CACHE.md).
#include <iostream>
#include <system_error>

#include "offload_build/run/request.hpp"
#include "launcher_roots.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/util/paths.hpp"

namespace ob::run {

std::pair<std::vector<fs::path>, fs::path> launcher_roots(const Request& o, const fs::path& cwd) {
  std::vector<fs::path> bases;
  if (fs::path base = base_dir_for(o.config, std::nullopt); !base.empty()) bases.push_back(std::move(base));
  // The project's own directories (the CMake package passes CMAKE_SOURCE_DIR
  // and CMAKE_BINARY_DIR): the nearest one holding the working directory
  // anchors the names, so every compile of the project, whatever directory
  // it runs in (Makefiles run each target's in its own), names a file alike.
  fs::path anchor = cwd;
  size_t anchor_depth = 0;
  for (const auto& dir : o.project_dirs) {
    std::error_code ec;
    const fs::path real = fs::canonical(fs::absolute(dir), ec);
    if (ec) continue;  // not (yet) there: nothing under it to name
    bases.push_back(real);
    const size_t depth = static_cast<size_t>(std::distance(real.begin(), real.end()));
    if ((real == cwd || util::is_under(cwd, real)) && depth > anchor_depth) {
      anchor = real;
      anchor_depth = depth;
    }
  }
  return {std::move(bases), std::move(anchor)};
}

KernelNames launcher_kernel_names(const fs::path& compiler, const std::vector<fs::path>& bases, const fs::path& anchor,
                                  Session& session, plan::Plan& plan) {
  const Request& o = session.options();
  plan.base_dirs = bases;
  plan.name_anchor = anchor;
  const toolchain::NameRoots roots{plan.base_dirs, plan.name_anchor};
  return {KernelNames::Mode::Stable,
          [compiler, roots, memo = session.probe_memo(), &c = o.config] {
            return c.flag("stable_names") ? toolchain::stable_names_for(compiler, roots, memo) : std::nullopt;
          },
          o.config.text("kernel_namespace"), [&o](const std::string& why) {
            if (o.config.flag("no_cache") || first_in_build(cache_dir_for(o.config, std::nullopt), "stable-names"))
              std::cerr << "offload-build: warning: " << why << '\n';
          }};
}

}  // namespace ob::run
