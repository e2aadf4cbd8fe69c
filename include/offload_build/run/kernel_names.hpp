// Stable kernel names for a plan's compiles (docs/CACHE.md): the
// stable-names library's answer for a compiler, asked while the plan is made,
// and applied to the plan by Session::run (KernelNames).
#pragma once

#include <functional>
#include <future>
#include <optional>
#include <string>

#include "offload_build/config/config.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::run {

// Kernel names from each file's place relative to `plan`'s base_dirs and
// name_anchor (set), by the library's answer `names` for the compiler,
// salted with the project's namespace `salt`; a fault is said through `warn`.
// Flang's source names from the working directory's (plan::name_working_dir).
// Then, unless no_cache, the lookup records the job cache checks on every hit.
void use_stable_names(plan::Plan& plan, std::optional<toolchain::StableNames> names, const std::string& salt,
                      const config::Config& c, const std::function<void(const std::string&)>& warn);

// The stable-names answer for a compiler (toolchain::stable_names_for: a
// one-line compile when it is not remembered), asked on a thread while the
// plan is made, whose driver listings it would otherwise follow. Asked at
// when needed (no thread) when `parallel` is false; not at all unless `wanted`.
class StableNamesQuestion {
 public:
  StableNamesQuestion(const fs::path& compiler, const toolchain::NameRoots& roots,
                      const std::optional<fs::path>& probe_memo, bool wanted, bool parallel);
  std::optional<toolchain::StableNames> answer() { return answer_.get(); }  // once

 private:
  std::future<std::optional<toolchain::StableNames>> answer_;
};

}  // namespace ob::run
