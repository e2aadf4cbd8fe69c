// The job cache of `offload-build cargo`'s device passes (see cargo_cache.hpp).
#include "cargo_cache.hpp"

#include <algorithm>
#include <iostream>

#include "offload_build/cache/entry_metadata.hpp"
#include "offload_build/storage/hash.hpp"
#include "offload_build/util/file_identity.hpp"
#include "offload_build/util/files.hpp"

namespace ob::cli::cargo_cache {

namespace {

// Every regular file under `dir`, sorted, without target/ and hidden entries.
std::vector<fs::path> crate_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || (it.depth() == 0 && name == "target")) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string files_digest(const fs::path& workspace_root, const std::vector<fs::path>& crate_dirs) {
  cache::Hasher h;
  // Bounded reads (a planted FIFO or /dev/zero costs nothing); a file that
  // cannot be read whole is keyed by its identity (size and mtime), so a
  // change to it still changes the key.
  auto content = [](const fs::path& f, const char* missing) {
    if (auto text = util::read_file(f, util::kMaxBuildOutput)) return std::move(*text);
    std::error_code ec;
    return fs::exists(f, ec) ? "<unreadable> " + util::file_identity(f) : std::string(missing);
  };
  h.field("Cargo.lock", content(workspace_root / "Cargo.lock", "<none>"));
  for (const auto& dir : crate_dirs)
    for (const auto& f : crate_files(dir)) {
      h.field("file", f.lexically_relative(workspace_root).string());
      h.field("content", content(f, "<unreadable>"));
    }
  return h.hex();
}

std::string key(const KeyInputs& in) {
  cache::Hasher h;
  h.field("cargo-device", "1");
  h.field("rustc", in.rustc_version);
  h.field("llvm", in.llvm);
  for (const auto& a : in.argv) h.field("arg", a);
  for (const auto& k : in.kernels) h.field("kernel", k);
  for (const auto& f : in.rustflags) h.field("rustflag", f);
  h.field("files", in.files);
  return h.hex();
}

DeviceCache::DeviceCache(const GlobalOptions& o) : context_(o) {
  if (o.no_cache || o.dry_run) return;
  // A bad remote URL is said once and not used (as for a launcher compile).
  if (!context_.open_cache({}, RemoteErrors::Warn)) return;
  if (context_.storage()) context_.storage()->warn_if_unwritable();
  layers_ = context_.layers();
}

bool DeviceCache::restore(const std::string& key, const fs::path& image, const std::string& what) {
  if (!layers_) return false;
  cache::Lookup found = layers_->get("result", key);
  if (found.status == cache::LookupStatus::Hit) {
    auto meta = cache::decode_result_meta(found.entry);
    if (meta && meta->job == what && meta->modes.size() == 1 && found.entry.files.size() == 1) {
      if (util::write_file_atomic(image, found.entry.files.front().data)) {  // never half an image
        ++counters_.hits;
        return true;
      }
    } else {
      layers_->discard("result", key);
      ++counters_.corrupt;
    }
  }
  ++counters_.misses;
  ++counters_.misses_by_reason[found.status == cache::LookupStatus::Missing ? "no entry" : "corrupt"];
  return false;
}

void DeviceCache::store(const std::string& key, const fs::path& image, const std::string& what) {
  if (!layers_ || !layers_->writable()) return;
  auto bytes = util::read_file(image, util::kMaxBuildOutput);
  if (!bytes) return;
  cache::Entry entry;
  entry.metadata = cache::encode_result_meta({what, {0644}, false, false});
  entry.files.push_back({"image", std::move(*bytes)});
  if (layers_->put("result", key, entry)) ++counters_.stores;
  else ++counters_.store_failures;
}

void DeviceCache::finish() {
  if (layers_) layers_->record(counters_);
}

}  // namespace ob::cli::cargo_cache
