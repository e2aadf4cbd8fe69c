// What an upload sends (reapi_upload.hpp).
#include "reapi_upload.hpp"

#include <algorithm>

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

bool write_chunks(google::bytestream::ByteStream::Stub& stub, grpc::ClientContext& ctx, const std::string& name,
                  const re::Digest& d, const std::string& data, std::string& error) {
  constexpr size_t kChunk = 1 << 20;
  google::bytestream::WriteResponse resp;
  auto writer = stub.Write(&ctx, &resp);
  size_t at = 0;
  do {
    google::bytestream::WriteRequest req;
    if (at == 0) req.set_resource_name(name);
    req.set_write_offset(int64_t(at));
    const size_t n = std::min(kChunk, data.size() - at);
    req.set_data(data.substr(at, n));
    at += n;
    req.set_finish_write(at == data.size());
    if (!writer->Write(req)) break;
  } while (at < data.size());
  writer->WritesDone();
  auto s = writer->Finish();
  if (!s.ok()) {
    error = "ByteStream Write: " + status_text(s);
    return false;
  }
  if (resp.committed_size() != d.size_bytes() && resp.committed_size() != -1) {
    error = "ByteStream Write: the engine committed " + std::to_string(resp.committed_size()) + " of " +
            std::to_string(d.size_bytes()) + " bytes";
    return false;
  }
  return true;
}

}  // namespace ob::reapi
