// Hashing for the cache: SHA-256 (OpenSSL's SHA256_*) for keys, XXH3 (libxxhash) for
// entry checksums. No hand-written hash functions anywhere.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "offload_build/util/result.hpp"

struct SHA256state_st;  // OpenSSL's SHA256_CTX, kept out of this header

namespace ob::storage {

namespace fs = std::filesystem;

// Incremental SHA-256. Feed bytes with update() or named values with field();
// hex() gives the digest of everything fed so far and may be called again
// (and more fed afterwards).
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  Hasher& update(std::string_view bytes);
  // Unambiguous key/value: both length-prefixed (u64 little-endian), so
  // field("a", "bc") and field("ab", "c") differ, as do ("a","") + ("b","").
  Hasher& field(std::string_view name, std::string_view value);
  // Lowercase hex, 64 characters.
  std::string hex() const;
  // The same digest as 32 raw bytes.
  std::string digest() const;

 private:
  std::unique_ptr<SHA256state_st> ctx_;
};

// SHA-256 of `bytes`, lowercase hex.
std::string sha256_hex(std::string_view bytes);

// HMAC-SHA256 (RFC 2104) under `key` of `parts` one after another: 32 raw
// bytes. Built on the SHA-256 above, not on EVP_MAC: EVP's provider tables
// are 16,000 relocations every start of the program pays (docs/BENCHMARKS.md B6).
std::string hmac_sha256(std::string_view key, std::initializer_list<std::string_view> parts);

// SHA-256 of a file's contents, read in chunks; the error names the file.
Result<std::string> sha256_file(const fs::path& path);

// XXH3 64-bit (seed 0) of `bytes`.
uint64_t xxh3(std::string_view bytes);

}  // namespace ob::storage
