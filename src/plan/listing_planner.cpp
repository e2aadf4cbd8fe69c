// A launcher compile run as the driver's own commands (`clang ... -###`), one
// job each: for -save-temps, whose pipeline (preprocess, compile to bitcode,
// backend, assemble, for the host and every device) keeps every temp under
// the name and in the place clang gives it. The device chains run in
// parallel; nothing is cached (the temps are products too).
#include <algorithm>

#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::plan {

namespace {

using toolchain::driver_listing::Argv;

// Whether `argv` names `file` (as an argument, or inside one: -fembed-offload-object=F,
// --image=file=F,...).
bool mentions(const Argv& argv, const std::string& file) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) {
    for (size_t at = a.find(file); at != std::string::npos; at = a.find(file, at + 1)) {
      const size_t end = at + file.size();
      const bool starts = at == 0 || a[at - 1] == '=';
      if (starts && (end == a.size() || a[end] == ',')) return true;
    }
    return false;
  });
}

}  // namespace

Result<Plan> make_listing_plan(const std::vector<Argv>& listing, const toolchain::frontend::CompileRequest& req,
                               const fs::path& cwd) {
  Plan plan;
  plan.cwd = cwd;
  plan.program = (cwd / req.output_arg()).lexically_normal();
  plan.build_dir = launcher_work_dir(plan.program);
  plan.directories = {plan.build_dir};
  const fs::path source = (cwd / req.source).lexically_normal();
  const fs::path tmp = fs::temp_directory_path();
  for (size_t i = 0; i < listing.size(); ++i) {
    const Argv& argv = listing[i];
    const std::string out = toolchain::driver_listing::output_of(argv);
    if (out.empty()) return Error::failure("a listed command writes no output: " + argv.front());
    for (const auto& f : toolchain::driver_listing::written_by(argv))
      if (util::starts_with(f, tmp.string() + "/"))
        return Error::failure("a listed command writes a temporary file " + f);
    Job job;
    job.argv = argv;
    job.source = source;
    job.unit = 1;
    job.cacheable = false;
    job.outputs = {(cwd / out).lexically_normal()};
    job.forbid_device_runtime_calls = false;
    // Read after write, and write after read or write, keep the driver's order.
    for (size_t j = 0; j < i; ++j) {
      bool after = false;
      for (const auto& f : toolchain::driver_listing::written_by(listing[j])) after |= mentions(argv, f);
      for (const auto& f : toolchain::driver_listing::written_by(argv)) after |= mentions(listing[j], f);
      if (after) job.deps.push_back(j);
    }
    const auto device = toolchain::driver_listing::device_cc1_target(argv);
    if (toolchain::driver_listing::packages(argv)) {
      job.kind = JobKind::Package;
    } else if (device) {
      job.kind = JobKind::DeviceCompile;
      job.target = *device;
    } else if (job.outputs.front() == plan.program) {
      job.kind = JobKind::HostCompile;
    } else if (toolchain::driver_listing::assembles(argv)) {
      job.kind = JobKind::Assemble;
    } else {
      job.kind = JobKind::HostIr;  // the host's preprocess, parse and backend steps
    }
    plan.add(std::move(job));
  }
  if (plan.jobs.empty() || plan.jobs.back().outputs.front() != plan.program)
    return Error::failure("the listing does not end with the command writing " + req.output_arg());
  plan.jobs.front().kind = JobKind::HostIr;  // run_plan prints its output first: clang's order
  return plan;
}

}  // namespace ob::plan
