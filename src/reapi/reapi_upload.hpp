// What an upload sends (reapi_client.cpp): the blobs the engine's CAS is
// known to hold are neither asked about nor sent again; a few small unknown
// ones are sent without asking first. And which downloads go in one batch.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "google/bytestream/bytestream.grpc.pb.h"
#include "reapi_messages.hpp"

namespace ob::reapi {

// Unknown blobs of at most this many bytes in all are sent without a
// FindMissingBlobs first: one BatchUpdateBlobs of them costs less than the
// round trip that would ask (a cold job's action, command, trees and source).
inline constexpr int64_t kSendUnasked = 64 << 10;

// The blobs an engine's CAS is known to hold, as one client learned them this
// run: each it uploaded and each FindMissingBlobs did not name. An Execute
// answered FAILED_PRECONDITION (the CAS evicted one) makes the client forget
// the action's blobs and upload them again (asking first when they are over
// kSendUnasked). Bounded: past kMax it starts over.
class KnownBlobs {
 public:
  bool has(const std::string& hash) const;
  void add(const std::vector<re::Digest>& digests);
  void forget(const BlobMap& blobs);

 private:
  static constexpr size_t kMax = 1 << 20;
  mutable std::mutex m_;
  std::unordered_set<std::string> hashes_;
};

struct UploadPlan {
  std::vector<re::Digest> ask;   // FindMissingBlobs first; those it names are sent
  std::vector<re::Digest> send;  // sent without asking
};
// `blobs` less those `known` holds: asked about when `ask_first` and they
// are more than kSendUnasked bytes in all, else sent.
UploadPlan plan_upload(const BlobMap& blobs, const KnownBlobs& known, bool ask_first);

// Whether the blobs `want` are read in one BatchReadBlobs: two or more, each
// at most `max_blob` bytes (a larger one is refused when read alone), all at
// most `batch` bytes.
bool read_in_one_batch(const std::vector<re::Digest>& want, uint64_t max_blob, int64_t batch);

// `data` (blob `d`) as one ByteStream Write to resource `name`, in 1 MiB
// chunks, on `ctx` (its deadline and metadata set): false and `error` unless
// the engine committed all of it.
bool write_chunks(google::bytestream::ByteStream::Stub& stub, grpc::ClientContext& ctx, const std::string& name,
                  const re::Digest& d, const std::string& data, std::string& error);

}  // namespace ob::reapi
