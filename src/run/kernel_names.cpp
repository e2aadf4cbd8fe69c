// Stable kernel names for a plan (kernel_names.hpp).
#include "offload_build/run/kernel_names.hpp"

#include <iostream>

namespace ob::run {

void use_stable_names(plan::Plan& plan, std::optional<toolchain::StableNames> names, const std::string& salt,
                      const config::Config& c, const std::function<void(const std::string&)>& warn) {
  if (c.flag("stable_names")) {
    if (!names) {
      if (std::string why = toolchain::stable_names_unavailable(); !why.empty()) warn(why);
    } else {
      plan::use_stable_names(plan, *names, toolchain::kernel_salt(salt));
      if (names->warn()) warn(names->fallback);
      else if (c.flag("verbose") && !names->keyed) std::cerr << "offload-build: " << names->fallback << '\n';
    }
  }
  // For the job cache, which checks them on every hit (none with --no-cache:
  // nothing would read the records), with stable names off too: the library records only.
  if (!c.flag("no_cache")) plan::record_lookups(plan, toolchain::preload_library());
  plan::name_working_dir(plan);  // flang's source names: as its kernel names, alike in every checkout
}

StableNamesQuestion::StableNamesQuestion(const fs::path& compiler, const toolchain::NameRoots& roots,
                                         const std::optional<fs::path>& probe_memo, bool wanted,
                                         bool parallel) {
  if (!wanted) {
    std::promise<std::optional<toolchain::StableNames>> none;
    answer_ = none.get_future();
    none.set_value(std::nullopt);
    return;
  }
  answer_ = std::async(parallel ? std::launch::async : std::launch::deferred,
                       [compiler, roots, probe_memo] { return toolchain::stable_names_for(compiler, roots, probe_memo); });
}

}  // namespace ob::run
