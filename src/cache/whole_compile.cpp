#include "offload_build/cache/whole_compile.hpp"

#include <fmt/core.h>

#include "offload_build/exec/executor.hpp"
#include "offload_build/util/files.hpp"

namespace ob::cache {

namespace {

// A depfile lists every file a compile read: thousands of lines at most.
constexpr uint64_t kMaxDepfile = uint64_t{64} << 20;

JobCacheOptions whole_options(std::string& said, std::vector<fs::path> system_dirs) {
  JobCacheOptions o;
  o.system_dirs = std::move(system_dirs);
  o.keep_build_state = false;
  o.replay = [&said](const plan::Job&, std::string_view text) { said = std::string(text); };
  return o;
}

}  // namespace

std::vector<std::string> split_facts(const config::Config& c) {
  const char* path = config::env_or_null("PATH");
  return {fmt::format("two_parse={}", c.flag("two_parse")), "kernel_namespace=" + c.text("kernel_namespace"),
          "stable_names=" + c.text("stable_names"), "system_dirs=" + c.text("system_dirs"),
          std::string("PATH=") + (path ? path : "")};
}

WholeCompile::WholeCompile(storage::LayeredStorage& storage, plan::Plan plan, std::vector<fs::path> system_dirs)
    : plan_(std::move(plan)), cache_(storage, plan_, whole_options(said_, std::move(system_dirs))) {}

std::optional<std::string> WholeCompile::serve() {
  const plan::Job& job = plan_.jobs.front();
  std::vector<fs::path> finals = job.outputs;
  if (job.keep_depfile) finals.push_back(*job.depfile);
  std::vector<fs::path> temps;
  for (const auto& f : finals) temps.push_back(exec::temporary_path(f, job.id));
  auto remove_temps = [&] {
    std::error_code ec;
    for (const auto& t : temps) fs::remove(t, ec);
  };
  if (cache_.serve(job, temps) != exec::Served::FromCache) {
    remove_temps();  // a failed restore may have written some
    return std::nullopt;
  }
  // The object last: a make that sees it sees the depfile too.
  for (size_t i = temps.size(); i-- > 0;) {
    std::error_code ec;
    fs::rename(temps[i], finals[i], ec);
    if (ec) {
      remove_temps();
      return std::nullopt;  // the split runs and writes them all
    }
  }
  cache_.after_serve(job);
  cache_.finish();
  return said_;
}

void WholeCompile::store(std::vector<Dep> reads, std::string_view diagnostics, size_t jobs) {
  const plan::Job& job = plan_.jobs.front();
  std::optional<std::string> kept;
  if (job.keep_depfile) {
    kept = util::read_file(*job.depfile, kMaxDepfile);
    if (!kept) return;
  }
  cache_.store_whole(job, job.outputs, std::move(reads), std::move(kept), diagnostics, jobs);
}

}  // namespace ob::cache
