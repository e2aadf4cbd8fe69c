// What an upload sends (reapi_upload.hpp).
#include "reapi_upload.hpp"

namespace ob::reapi {

bool KnownBlobs::has(const std::string& hash) const {
  std::lock_guard lock(m_);
  return hashes_.count(hash) != 0;
}

void KnownBlobs::add(const std::vector<re::Digest>& digests) {
  std::lock_guard lock(m_);
  if (hashes_.size() + digests.size() > kMax) hashes_.clear();
  for (const auto& d : digests) hashes_.insert(d.hash());
}

void KnownBlobs::forget(const BlobMap& blobs) {
  std::lock_guard lock(m_);
  for (const auto& [hash, blob] : blobs) hashes_.erase(hash);
}

UploadPlan plan_upload(const BlobMap& blobs, const KnownBlobs& known, bool ask_first) {
  UploadPlan plan;
  int64_t bytes = 0;
  for (const auto& [hash, blob] : blobs) {
    if (known.has(hash)) continue;
    plan.send.push_back(blob.first);
    bytes += blob.first.size_bytes();
  }
  if (ask_first && bytes > kSendUnasked) plan.ask.swap(plan.send);
  return plan;
}

bool read_in_one_batch(const std::vector<re::Digest>& want, uint64_t max_blob, int64_t batch) {
  int64_t total = 0;
  for (const auto& d : want) {
    if (uint64_t(d.size_bytes()) > max_blob) return false;
    total += d.size_bytes();
  }
  return want.size() >= 2 && total <= batch;
}

}  // namespace ob::reapi
