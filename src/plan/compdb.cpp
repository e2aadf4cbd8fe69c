#include "offload_build/plan/compdb.hpp"

#include "offload_build/toolchain/frontends/driver_listing.hpp"
#include "offload_build/util/json_text.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <fmt/core.h>

namespace ob::plan {

namespace {

nlohmann::json entry(const Plan& plan, const Job& job) {
  const auto& argv = job.driver_argv.empty() ? job.argv : job.driver_argv;
  fs::path output = job.outputs.front();
  if (const std::string o = toolchain::driver_listing::output_of(argv); !o.empty()) output = plan.cwd / o;
  return {{"directory", plan.cwd.string()},
          {"arguments", argv},
          {"file", job.source.string()},
          {"output", output.lexically_normal().string()}};
}

bool is_c_family(const Job& job) {
  auto lang = manifest::language_from_extension(job.source);
  // A manifest "language" may compile any extension as C or C++; only Rust is not.
  return !lang || *lang != manifest::Language::Rust;
}

}  // namespace

nlohmann::json compilation_database(const Plan& plan) {
  auto db = nlohmann::json::array();
  for (const auto& host : plan.jobs) {
    if (host.kind != JobKind::HostCompile || !is_c_family(host)) continue;
    db.push_back(entry(plan, host));
    for (const auto& dev : plan.jobs)
      if (dev.kind == JobKind::DeviceCompile && dev.unit == host.unit) db.push_back(entry(plan, dev));
  }
  return db;
}

Result<fs::path> write_compilation_database(const Plan& plan) {
  const fs::path file = plan.build_dir / "compile_commands.json";
  const fs::path tmp = plan.build_dir / fmt::format(".compile_commands.json.{}", getpid());
  std::error_code ec;
  fs::create_directories(plan.build_dir, ec);
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << util::dump_replacing(compilation_database(plan), 2) << '\n';  // see docs/REPORT.md
    if (!out) return Error::failure(fmt::format("cannot write {}", file.string()));
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Error::failure(fmt::format("cannot write {}: {}", file.string(), ec.message()));
  }
  return file;
}

}  // namespace ob::plan
