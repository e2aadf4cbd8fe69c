// A Rust build's launches checked against what its device passes compiled
// (rust_launch_check.hpp).
#include "rust_launch_check.hpp"

#include <algorithm>

#include "offload_build/toolchain/frontends/rust_mir.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

namespace {

bool is_mir(const fs::path& p) { return p.extension() == ".mir"; }

}  // namespace

Result<void> check_rust_launches(const plan::Plan& plan, const toolchain::Toolchain& tc,
                                 const std::vector<fs::path>& host_mirs, const std::string& device_cfg) {
  std::vector<toolchain::rust::DeviceImage> images;
  for (const plan::Job& dev : plan.jobs) {
    if (dev.kind != plan::JobKind::DeviceCompile || !dev.target) continue;
    const auto mir = std::find_if(dev.outputs.begin(), dev.outputs.end(), is_mir);
    if (mir == dev.outputs.end()) continue;
    // The image: the host device's image link of this pass, else the pass's own output (a GPU's bitcode).
    fs::path image = dev.outputs.front();
    for (const plan::Job& link : plan.jobs)
      if (link.kind == plan::JobKind::ImageLink && std::count(link.deps.begin(), link.deps.end(), dev.id))
        image = link.outputs.front();
    auto read = toolchain::rust::read_device_image(tc, *dev.target, image, *mir);
    if (!read) return read.error();
    images.push_back(std::move(*read));
  }
  std::vector<toolchain::rust::Mir> host;
  for (const auto& file : host_mirs) {
    auto read = toolchain::rust::read_mir(file);
    if (!read) return read.error();
    host.push_back(std::move(*read));
  }
  return toolchain::rust::check_launches(host, images, device_cfg);
}

}  // namespace ob::run
