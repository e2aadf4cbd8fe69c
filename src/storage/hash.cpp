// SHA-256 via OpenSSL and XXH3 via libxxhash. OpenSSL's SHA256_* functions
// (deprecated in 3.0, kept in every 3.x): EVP's digests first load the
// configuration file and build the provider tables, which was a fifth of a
// launcher cache hit (docs/BENCHMARKS.md B6); these compute the same digest
// with no set-up.
#include "offload_build/storage/hash.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <xxhash.h>

namespace ob::storage {

namespace {

std::string to_hex(const unsigned char* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

void append_u64(Hasher& h, uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  h.update(std::string_view(buf, 8));
}

// OpenSSL failures here mean a broken library: not an expected failure, so
// they throw (cli::main reports them).
void check(int ok, const char* what) {
  if (ok != 1) throw std::runtime_error(std::string("OpenSSL SHA-256 failed in ") + what);
}

}  // namespace

Hasher::Hasher() : ctx_(std::make_unique<SHA256_CTX>()) { check(SHA256_Init(ctx_.get()), "SHA256_Init"); }

Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

Hasher& Hasher::update(std::string_view bytes) {
  if (!bytes.empty())
    check(SHA256_Update(ctx_.get(), bytes.data(), bytes.size()), "SHA256_Update");
  return *this;
}

Hasher& Hasher::field(std::string_view name, std::string_view value) {
  append_u64(*this, name.size());
  update(name);
  append_u64(*this, value.size());
  update(value);
  return *this;
}

std::string Hasher::digest() const {
  // Finish a copy so this hasher can go on.
  SHA256_CTX copy = *ctx_;
  unsigned char out[SHA256_DIGEST_LENGTH];
  check(SHA256_Final(out, &copy), "SHA256_Final");
  return std::string(reinterpret_cast<const char*>(out), sizeof out);
}

std::string Hasher::hex() const {
  const std::string raw = digest();
  return to_hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

std::string sha256_hex(std::string_view bytes) { return Hasher().update(bytes).hex(); }

std::string hmac_sha256(std::string_view key, std::initializer_list<std::string_view> parts) {
  constexpr size_t kBlock = 64;  // SHA-256's block size
  std::string k(key.size() > kBlock ? Hasher().update(key).digest() : std::string(key));
  k.resize(kBlock, '\0');
  std::string inner_pad(kBlock, '\0'), outer_pad(kBlock, '\0');
  for (size_t i = 0; i < kBlock; ++i) {
    inner_pad[i] = static_cast<char>(k[i] ^ 0x36);
    outer_pad[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  Hasher inner;
  inner.update(inner_pad);
  for (auto part : parts) inner.update(part);
  return Hasher().update(outer_pad).update(inner.digest()).digest();
}

Result<std::string> sha256_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::failure("cannot read " + path.string() + ": " + std::strerror(errno));
  Hasher h;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Error::failure("cannot read " + path.string() + ": " + std::strerror(err));
    }
    if (n == 0) break;
    h.update(std::string_view(buf, static_cast<size_t>(n)));
  }
  ::close(fd);
  return h.hex();
}

uint64_t xxh3(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

}  // namespace ob::storage
