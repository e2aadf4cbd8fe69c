// The cache entry format: a self-checking header, then a (usually zstd) payload.
//
//   offset size  field
//        0    8  magic "OBCACHE\0"
//        8    4  format version, u32 little-endian (kFormatVersion = 2)
//       12    4  flags, u32 LE: bit 0 = payload is one zstd frame; bit 1 = signed;
//                other bits 0
//       16    8  payload size uncompressed, u64 LE (<= kMaxPayloadSize)
//       24    8  stored payload size, u64 LE (== file size - 72)
//       32   32  HMAC-SHA256 (signing key) of bytes 0..31 followed by the stored
//                payload when flag bit 1 is set, else zeros
//       64    8  XXH3-64 (seed 0) of bytes 0..63 followed by the stored payload
//       72    -  stored payload
//
// Every byte is covered: the magic and version by their own checks (reported
// as such), the size fields by the exact-length check and the checksum, the
// checksum field by the comparison itself, the signature and the payload by
// the checksum, and with a signing key the header fields and payload by the
// HMAC (the checksum is for damage; the HMAC for authorship).
//
// The uncompressed payload is: u64 binding length, binding ("<kind>/<key>":
// where the entry was stored, so an entry copied under another key is
// refused), u64 metadata length, metadata bytes, u64 file count, then per file
// u64 name length, name, u64 data length, data (all LE). It is compressed with
// zstd (level kZstdLevel) unless that saves less than 16 bytes + 1/64; then
// it is stored as is with flag bit 0 clear.
#include <openssl/crypto.h>
#include <zstd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <xxhash.h>

#include "offload_build/storage/hash.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::storage {

namespace {

constexpr char kMagic[8] = {'O', 'B', 'C', 'A', 'C', 'H', 'E', '\0'};
constexpr uint32_t kFlagZstd = 1;
constexpr uint32_t kFlagSigned = 2;
constexpr size_t kMacOffset = 32;
constexpr size_t kMacSize = 32;
constexpr int kZstdLevel = 3;
constexpr size_t kChecksumOffset = 64;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_blob(std::string& out, std::string_view bytes) {
  put_u64(out, bytes.size());
  out.append(bytes);
}
uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint64_t checksum(std::string_view header32, std::string_view stored) {
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(),
                                                                        &XXH3_freeState);
  if (!state) throw std::bad_alloc();
  XXH3_64bits_reset(state.get());
  XXH3_64bits_update(state.get(), header32.data(), header32.size());
  XXH3_64bits_update(state.get(), stored.data(), stored.size());
  return XXH3_64bits_digest(state.get());
}

// HMAC-SHA256 of the header's first 32 bytes and the stored payload.
std::string mac(std::string_view signing_key, std::string_view header32, std::string_view stored) {
  return hmac_sha256(signing_key, {header32, stored});
}

std::string binding_of(std::string_view kind, std::string_view key) {
  return std::string(kind) + "/" + std::string(key);
}

Error bad_payload(const std::string& what) { return Error::failure("bad payload: " + what); }

// Reads the uncompressed payload, every length checked against what is left.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool u64(uint64_t& v) {
    if (left() < 8) return false;
    v = get_u64(bytes_.data() + pos_);
    pos_ += 8;
    return true;
  }
  bool blob(std::string& out) {
    uint64_t n = 0;
    if (!u64(n) || n > left()) return false;
    out.assign(bytes_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

Result<Entry> parse_payload(std::string_view raw, std::string_view binding) {
  Reader r(raw);
  Entry entry;
  uint64_t count = 0;
  std::string stored_under;
  if (!r.blob(stored_under)) return bad_payload("binding runs past the end");
  if (stored_under != binding)
    return Error::failure(fmt::format("stored for {}, found under {}",
                                      util::shorten(stored_under, 120), binding));
  if (!r.blob(entry.metadata)) return bad_payload("metadata runs past the end");
  if (!r.u64(count)) return bad_payload("file count missing");
  if (count > r.left() / 16) return bad_payload(fmt::format("{} files cannot fit", count));
  entry.files.resize(count);
  for (auto& f : entry.files) {
    if (!r.blob(f.name) || !r.blob(f.data)) return bad_payload("a file runs past the end");
  }
  if (r.left() != 0) return bad_payload(fmt::format("{} unexpected bytes at the end", r.left()));
  return entry;
}

// The binding at the start of a payload (u64 length, then the text), checked
// on whatever prefix of the payload is there: an error as soon as the prefix
// shows the entry was stored under another name, nothing while it is too short
// to tell. parse_payload checks the whole payload again.
std::optional<Error> binding_refutes(std::string_view prefix, std::string_view binding) {
  if (prefix.size() < 8) return std::nullopt;
  const uint64_t n = get_u64(prefix.data());
  if (n != binding.size()) {
    if (n > prefix.size() - 8 && n > binding.size() + 4096) return bad_payload("binding runs past the end");
    if (n > prefix.size() - 8) return std::nullopt;  // parse_payload says what it is
    return Error::failure(fmt::format("stored for {}, found under {}",
                                      util::shorten(std::string(prefix.substr(8, n)), 120), binding));
  }
  const std::string_view have = prefix.substr(8, std::min<size_t>(n, prefix.size() - 8));
  if (have != binding.substr(0, have.size()))
    return Error::failure(fmt::format("stored for {}{}, found under {}",
                                      util::shorten(std::string(have), 120),
                                      have.size() < n ? "..." : "", binding));
  return std::nullopt;
}

// Decompress one zstd frame that must expand to exactly `expected` bytes. The
// output buffer grows with what is actually produced (never more than
// expected + 1), so a hostile size field cannot make us allocate up front; the
// first 64 KiB come out alone and must start with `binding`, so an entry
// stored under another name is refused before the rest is decompressed.
Result<std::string> decompress(std::string_view stored, uint64_t expected, std::string_view binding) {
  // One context per thread, reset for each frame: making one costs more than
  // decompressing a small entry (552 of them took 9 ms in a fresh clone).
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (!dctx) throw std::bad_alloc();
  ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, 27);  // at most 128 MiB window
  const uint64_t limit = expected + 1;
  std::string out;
  out.resize(static_cast<size_t>(std::min<uint64_t>(limit, 64 << 10)));
  ZSTD_inBuffer in{stored.data(), stored.size(), 0};
  size_t produced = 0;
  bool bound = false;  // the binding checked
  for (;;) {
    ZSTD_outBuffer ob{out.data(), out.size(), produced};
    size_t ret = ZSTD_decompressStream(dctx.get(), &ob, &in);
    if (ZSTD_isError(ret)) return bad_payload(std::string("zstd: ") + ZSTD_getErrorName(ret));
    produced = ob.pos;
    if (produced > expected) return bad_payload("more data than the header says");
    if (!bound && (produced >= 8 + binding.size() || ob.pos == ob.size || ret == 0)) {
      if (auto refuted = binding_refutes(std::string_view(out.data(), produced), binding))
        return *refuted;
      bound = produced >= 8 + binding.size();
    }
    if (ret == 0) {
      if (in.pos != in.size) return bad_payload("data after the compressed frame");
      break;
    }
    if (ob.pos == ob.size) {
      out.resize(static_cast<size_t>(std::min<uint64_t>(limit, uint64_t{out.size()} * 2)));
    } else if (in.pos == in.size) {
      return bad_payload("compressed data ends early");
    }
  }
  if (produced != expected)
    return bad_payload(fmt::format("{} bytes, the header says {}", produced, expected));
  out.resize(produced);
  return out;
}

}  // namespace

std::string encode_entry(const Entry& entry, std::string_view kind, std::string_view key,
                         std::string_view signing_key, bool compress) {
  const std::string binding = binding_of(kind, key);
  std::string raw;
  size_t total = 24 + binding.size() + entry.metadata.size();
  for (const auto& f : entry.files) total += 16 + f.name.size() + f.data.size();
  raw.reserve(total);
  put_blob(raw, binding);
  put_blob(raw, entry.metadata);
  put_u64(raw, entry.files.size());
  for (const auto& f : entry.files) {
    put_blob(raw, f.name);
    put_blob(raw, f.data);
  }

  uint32_t flags = 0;
  std::string compressed;
  if (compress && !raw.empty()) {
    compressed.resize(ZSTD_compressBound(raw.size()));
    thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
    if (!cctx) throw std::bad_alloc();
    size_t n = ZSTD_compressCCtx(cctx.get(), compressed.data(), compressed.size(), raw.data(), raw.size(),
                                 kZstdLevel);
    // Only when it saves something worth a decompression.
    if (!ZSTD_isError(n) && n + 16 + raw.size() / 64 < raw.size()) {
      compressed.resize(n);
      flags |= kFlagZstd;
    }
  }
  const std::string& stored = (flags & kFlagZstd) ? compressed : raw;
  if (!signing_key.empty()) flags |= kFlagSigned;

  std::string out;
  out.reserve(kHeaderSize + stored.size());
  out.append(kMagic, sizeof kMagic);
  put_u32(out, kFormatVersion);
  put_u32(out, flags);
  put_u64(out, raw.size());
  put_u64(out, stored.size());
  if (signing_key.empty())
    out.append(kMacSize, '\0');
  else
    out.append(mac(signing_key, std::string_view(out.data(), kMacOffset), stored));
  put_u64(out, checksum(std::string_view(out.data(), kChecksumOffset), stored));
  out.append(stored);
  return out;
}

namespace {

Result<Entry> decode(std::string_view bytes, std::string_view kind, std::string_view key,
                     std::string_view signing_key, uint64_t max_payload, EntryFault& fault) {
  fault = EntryFault::Damaged;
  // The magic first (on what there is of it), so a short foreign file is
  // "not an entry" and a short entry is "truncated".
  if (bytes.substr(0, sizeof kMagic) !=
      std::string_view(kMagic, sizeof kMagic).substr(0, bytes.size()))
    return Error::failure("not an offload-build cache entry (bad magic)");
  if (bytes.size() < kHeaderSize)
    return Error::failure(fmt::format("truncated: {} bytes, shorter than the {}-byte header",
                                      bytes.size(), kHeaderSize));
  const char* h = bytes.data();
  uint32_t version = get_u32(h + 8);
  if (version != kFormatVersion)
    return Error::failure(fmt::format("format version {}, expected {}", version, kFormatVersion));
  uint32_t flags = get_u32(h + 12);
  uint64_t payload_size = get_u64(h + 16);
  uint64_t stored_size = get_u64(h + 24);
  uint64_t stored_checksum = get_u64(h + kChecksumOffset);
  uint64_t have = bytes.size() - kHeaderSize;
  if (stored_size > have)
    return Error::failure(fmt::format(
        "truncated: the header says {} payload bytes, the file has {}", stored_size, have));
  if (stored_size < have)
    return Error::failure(fmt::format(
        "size mismatch: the header says {} payload bytes, the file has {}", stored_size, have));
  std::string_view stored = bytes.substr(kHeaderSize);
  // Over the caller's limit: refused before any work on the payload (a
  // hostile remote's "62 KB that expand to 2 GB" costs nothing).
  if (payload_size > max_payload && payload_size <= kMaxPayloadSize) {
    fault = EntryFault::TooLarge;
    return Error::failure(fmt::format("the entry declares {} bytes, over the {}-byte limit",
                                      payload_size, max_payload));
  }
  if (checksum(bytes.substr(0, kChecksumOffset), stored) != stored_checksum)
    return Error::failure("checksum mismatch");
  if (!(flags & kFlagSigned) &&
      std::string_view(h + kMacOffset, kMacSize).find_first_not_of('\0') != std::string_view::npos)
    return Error::failure("bad header: a signature on an entry marked unsigned");
  if (!signing_key.empty()) {
    if (!(flags & kFlagSigned)) {
      fault = EntryFault::Unsigned;
      return Error::failure("not signed (a signing key is set: OFFLOAD_BUILD_SIGNING_KEY)");
    }
    const std::string expected = mac(signing_key, bytes.substr(0, kMacOffset), stored);
    if (CRYPTO_memcmp(expected.data(), h + kMacOffset, kMacSize) != 0) {
      fault = EntryFault::OtherKey;  // the checksum held: signed so, not damaged
      return Error::failure("signature mismatch (signed with another key, or altered)");
    }
  }

  // Past the checksum the bytes are as written, unless written by hand.
  if (flags & ~(kFlagZstd | kFlagSigned)) return bad_payload(fmt::format("unknown flags {:#x}", flags));
  if (payload_size > kMaxPayloadSize)
    return bad_payload(
        fmt::format("{} bytes is over the {}-byte limit", payload_size, kMaxPayloadSize));
  if (!(flags & kFlagZstd)) {
    if (payload_size != stored_size)
      return bad_payload(fmt::format("uncompressed payload of {} bytes, the header says {}",
                                     stored_size, payload_size));
    return parse_payload(stored, binding_of(kind, key));
  }
  const std::string binding = binding_of(kind, key);
  auto raw = decompress(stored, payload_size, binding);
  if (!raw) return raw.error();
  return parse_payload(*raw, binding);
}

}  // namespace

Result<Entry> decode_entry(std::string_view bytes, std::string_view kind, std::string_view key,
                           std::string_view signing_key, uint64_t max_payload, EntryFault* fault) {
  EntryFault why = EntryFault::Damaged;
  auto entry = decode(bytes, kind, key, signing_key, max_payload, why);
  if (!entry && fault) *fault = why;
  return entry;
}

}  // namespace ob::storage
