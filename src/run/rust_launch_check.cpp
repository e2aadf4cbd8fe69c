// A Rust build's launches checked against what its device passes compiled
// (rust_launch_check.hpp).
#include "rust_launch_check.hpp"

#include <algorithm>

#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/toolchain/frontends/rust_mir.hpp"
#include "offload_build/toolchain/runtime_libs.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::run {

namespace {

bool is_mir(const fs::path& p) { return p.extension() == ".mir"; }

// Where the last check that passed is remembered (one file per set of images
// checked against): the state of every file it read, so a no-op build whose
// files are as they were does not read them again (llvm-nm and the MIR).
constexpr const char* kCheckedName = ".rust-launches-checked";

std::string fingerprint(const std::vector<std::pair<fs::path, fs::path>>& images, const std::vector<fs::path>& host_mirs,
                        const std::vector<fs::path>& programs, const std::string& device_cfg,
                        const toolchain::Toolchain& tc) {
  storage::Hasher h;
  h.field("cfg", device_cfg).field("nm", util::file_identity(tc.root / "bin" / "llvm-nm"));
  // Each file by its state: an image or MIR restored from the cache, or
  // rewritten by its pass, has another (a no-op leaves them alone).
  for (const auto& [image, mir] : images)
    for (const fs::path& f : {image, mir}) h.field(f.string(), util::file_stamp(f).text);
  for (const auto& f : host_mirs) h.field(f.string(), util::file_stamp(f).text);
  for (const auto& f : programs) h.field("program " + f.string(), util::file_stamp(f).text);
  return h.hex();
}

}  // namespace

Result<void> check_rust_launches(const plan::Plan& plan, const toolchain::Toolchain& tc,
                                 const std::vector<fs::path>& host_mirs, const std::vector<fs::path>& programs,
                                 const std::string& device_cfg,
                                 const std::optional<std::vector<plan::JobId>>& devices) {
  std::vector<std::pair<fs::path, fs::path>> files;  // each image and its pass's MIR
  std::vector<const plan::Job*> passes;
  for (const plan::Job& dev : plan.jobs) {
    if (dev.kind != plan::JobKind::DeviceCompile || !dev.target) continue;
    if (devices && std::find(devices->begin(), devices->end(), dev.id) == devices->end()) continue;
    const auto mir = std::find_if(dev.outputs.begin(), dev.outputs.end(), is_mir);
    if (mir == dev.outputs.end()) continue;
    // The image: the host device's image link of this pass, else the pass's own output (a GPU's bitcode).
    fs::path image = dev.outputs.front();
    for (const plan::Job& link : plan.jobs)
      if (link.kind == plan::JobKind::ImageLink && std::count(link.deps.begin(), link.deps.end(), dev.id))
        image = link.outputs.front();
    files.emplace_back(image, *mir);
    passes.push_back(&dev);
  }
  std::string images_named;
  for (const auto& [image, mir] : files) images_named += image.string() + "\n";
  const std::string name = std::string(kCheckedName) + "-" + storage::sha256_hex(images_named).substr(0, 16);
  const fs::path marker = plan.build_dir / name;
  const std::string checked = fingerprint(files, host_mirs, programs, device_cfg, tc);
  if (auto text = storage::read_trusted_file(marker, false); text && util::trim(*text) == checked) return {};
  std::vector<toolchain::rust::DeviceImage> images;
  for (size_t i = 0; i < passes.size(); ++i) {
    auto read = toolchain::rust::read_device_image(tc, *passes[i]->target, files[i].first, files[i].second);
    if (!read) return read.error();
    images.push_back(std::move(*read));
  }
  std::vector<toolchain::rust::Mir> host;
  for (const auto& file : host_mirs) {
    auto read = toolchain::rust::read_mir(file);
    if (!read) return read.error();
    host.push_back(std::move(*read));
  }
  toolchain::rust::resolve_generic_launches(host);
  // What the programs launch, by symbol (a renamed declaration's), when their offload entries say.
  std::optional<std::set<std::string>> launched;
  for (const auto& p : programs)
    if (auto names = toolchain::offload_entry_names(p)) {
      if (!launched) launched.emplace();
      launched->insert(names->begin(), names->end());
    }
  OB_TRY(toolchain::rust::check_launches(host, images, device_cfg, launched));
  // Only a memo: failing to write it is never an error.
  storage::write_file_atomically(marker.parent_path(), name, checked + "\n");
  return {};
}

}  // namespace ob::run
