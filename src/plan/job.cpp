#include <fmt/core.h>

#include "offload_build/plan/plan.hpp"

namespace ob {

std::string_view job_kind_name(JobKind kind) {
  switch (kind) {
    case JobKind::HostIr: return "host-ir";
    case JobKind::DeviceCompile: return "device";
    case JobKind::Assemble: return "assemble";
    case JobKind::Package: return "package";
    case JobKind::HostCompile: return "host";
    case JobKind::Link: return "link";
  }
  return "?";
}

std::string Job::describe(const fs::path& cwd) const {
  std::string what = std::string(job_kind_name(kind));
  if (target) what += " " + target->short_name();
  const fs::path& subject = kind == JobKind::Link ? outputs.front() : source;
  return what + " " + arg_path(subject, cwd).string();
}

}  // namespace ob
