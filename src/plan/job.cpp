#include <algorithm>

#include <fmt/core.h>

#include "offload_build/config/config.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::plan {

std::string_view job_kind_name(JobKind kind) {
  switch (kind) {
    case JobKind::HostIr: return "host-ir";
    case JobKind::DeviceCompile: return "device";
    case JobKind::Assemble: return "assemble";
    case JobKind::ImageLink: return "image-link";
    case JobKind::Package: return "package";
    case JobKind::EmbedStub: return "stub";
    case JobKind::HostCompile: return "host";
    case JobKind::Link: return "link";
  }
  return "?";
}

std::string Job::describe(const fs::path& cwd) const {
  std::string what = std::string(job_kind_name(kind));
  if (target) what += " " + target->short_name();
  const fs::path& subject = kind == JobKind::Link && !outputs.empty() ? outputs.front() : source;
  return what + " " + arg_path(subject, cwd).string();
}

void use_stable_names(Plan& plan, const toolchain::StableNames& names, const std::string& salt) {
  if (!names.keyed) {
    plan.kernel_names_fallback = names.fallback;
    return;
  }
  for (auto& job : plan.jobs) {
    if (!job.inode_sensitive) continue;
    job.stable_names = true;
    auto env = names.env(salt);
    job.env.insert(job.env.end(), env.begin(), env.end());
  }
}

void name_working_dir(Plan& plan) {
  if (std::none_of(plan.jobs.begin(), plan.jobs.end(), [](const Job& j) { return j.names_working_dir; })) return;
  std::string name = plan.cwd.string();
  if (!plan.base_dirs.empty()) {
    name = "/proc/self/cwd";
  } else if (const char* pwd = config::env_or_null("PWD"); pwd && fs::path(pwd).is_absolute()) {
    std::error_code ec;
    if (fs::equivalent(pwd, plan.cwd, ec)) name = pwd;
  }
  for (auto& job : plan.jobs)
    if (job.names_working_dir) job.env.emplace_back("PWD", name);
}

void record_lookups(Plan& plan, const std::optional<fs::path>& library) {
  for (auto& job : plan.jobs) {
    if (!(job.inode_sensitive || job.records_lookups) || !job.depfile) continue;
    job.records_lookups = true;
    if (!library) continue;
    toolchain::add_lookups_env(job.env, *job.depfile, *library);
  }
}

}  // namespace ob::plan
