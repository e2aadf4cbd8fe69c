// The jobs and paths every planner makes alike (C/C++ and Rust): object
// paths, link tools, the device, single-parse and package jobs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/single_parse.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::plan::common_jobs {

namespace fs = std::filesystem;

// build/obj/<source relative to the project, ".." made safe>
fs::path object_stem(const manifest::Manifest& m, const fs::path& source);

// stem + suffix as one file name: "a.c" + ".host.o" -> "a.c.host.o".
fs::path with_suffix(const fs::path& stem, const std::string& suffix);

// Programs the final link runs besides the compiler driver: the linker
// wrapper, the host linker, and each target GPU family's device linker
// (with ptxas for nvptx when `with_ptxas`). Sorted, without duplicates.
std::vector<fs::path> link_tools(const manifest::Manifest& m, const toolchain::Toolchain& tc, bool with_ptxas);

// One TU's device pass for one target in the clang driver's form.
struct DeviceStep {
  manifest::Target target;
  fs::path out;                   // absolute: the device object
  fs::path dep;                   // absolute: its depfile
  std::vector<std::string> argv;  // the driver command (--offload-device-only)
  bool callers_depfile = false;   // launcher mode: `dep` is the depfile the caller asked for
};

// What a TU's jobs give the link.
struct UnitJobs {
  JobId host_job;
  fs::path host_object;
};

// Single parse: the job parsing `source` once for the host (`argv`, writing
// `host_ir` and `depfile`).
Job host_ir_job(const fs::path& source, const fs::path& host_ir, const fs::path& depfile,
                std::vector<std::string> argv, size_t unit);

// Single parse: the host codegen `argv` from `host_ir` with package `pkg`
// into `object`, after jobs `parse` and `pack`.
Job host_codegen_job(const fs::path& source, const fs::path& host_ir, const fs::path& pkg,
                     const fs::path& object, std::vector<std::string> argv, JobId parse,
                     JobId pack, size_t unit);

// A TU's device pass for one target as one driver command (the two-parse form).
Job device_job(const DeviceStep& step, const fs::path& source, size_t unit, const toolchain::Toolchain& tc);

// Single parse: add `dev` (a device pass in the driver's form, from
// device_job or launcher mode) as the driver's device cc1 reading `host_ir`
// (written by job `parse`), then for nvptx a ptxas job from `paths.assembly`
// to the object. Returns the job that writes the object.
JobId add_split_device(Plan& plan, Job dev, const toolchain::single_parse::DevicePass& pass,
                       const toolchain::single_parse::UnitPaths& paths, const fs::path& host_ir,
                       const fs::path& assembly, JobId parse);

// The job packaging `device_jobs`' images (one per target) of `source` into
// `pkg` by `argv`.
Job package_job(const Plan& plan, std::vector<std::string> argv, const fs::path& pkg,
                const fs::path& source, const std::vector<JobId>& device_jobs);

}  // namespace ob::plan::common_jobs
