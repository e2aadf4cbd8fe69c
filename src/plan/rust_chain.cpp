// The Rust chain after the device images (see rust_chain.hpp).
#include "rust_chain.hpp"

#include "common_jobs.hpp"

namespace ob::plan::rust_chain {

Links add(const Plan& plan, const toolchain::frontend::RustFrontend& fe, const toolchain::Toolchain& tc,
          const std::vector<toolchain::frontend::Image>& images, const std::vector<JobId>& device_jobs,
          const Paths& paths, const std::function<JobId(Job)>& add) {
  auto rel = [&](const fs::path& p) { return arg_path(p, plan.cwd); };
  Links links;
  links.last = add(common_jobs::package_job(plan, fe.package(tc, images, rel(paths.package)), paths.package,
                                           paths.subject, device_jobs));
  if (fe.host_reads_package(tc)) return links;

  Job stub;
  stub.kind = JobKind::EmbedStub;
  stub.source = paths.stub_subject;
  stub.argv = fe.stub(rel(paths.stub));
  stub.outputs = {paths.stub};
  const JobId stub_id = add(std::move(stub));

  Job embed;
  embed.kind = JobKind::HostCompile;
  embed.source = paths.subject;
  embed.argv = fe.embed(tc, rel(paths.stub), rel(paths.package), rel(paths.embedded));
  embed.inputs = {paths.stub, paths.package};
  embed.outputs = {paths.embedded};
  embed.deps = {stub_id, links.last};
  links.last = add(std::move(embed));
  links.embedded = paths.embedded;
  return links;
}

}  // namespace ob::plan::rust_chain
