#include "offload_build/util/size_text.hpp"

#include <cctype>
#include <fmt/format.h>

namespace ob::util {

Result<uint64_t> parse_size(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Error::usage(fmt::format(
        "invalid size '{}'{}: expected a whole or decimal number with an optional unit K, M, G "
        "or T (binary: 1K = 1024 bytes; KiB/KB, MiB/MB, ... mean the same), e.g. 1024, 64K, "
        "500M, 1.5G, 5GiB",
        text, why.empty() ? "" : " (" + why + ")"));
  };
  size_t i = 0;
  uint64_t whole = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    if (__builtin_mul_overflow(whole, 10u, &whole) ||
        __builtin_add_overflow(whole, uint64_t(text[i] - '0'), &whole))
      return bad("too large");
  }
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    size_t start = ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    }
    fraction = text.substr(start, i - start);
    if (fraction.empty()) return bad("");
  }
  if (digits == 0) return bad("");
  std::string unit;
  for (char c : text.substr(i))
    unit.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  for (auto [letter, s] : {std::pair{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}}) {
    std::string l(1, letter);
    if (unit == l || unit == l + "B" || unit == l + "IB") shift = s;
  }
  if (shift < 0) return bad("unknown unit '" + std::string(text.substr(i)) + "'");
  uint64_t bytes = 0;
  if (whole > (~uint64_t{0} >> shift)) return bad("too large");
  bytes = whole << shift;
  // Fraction: digits / 10^n of the unit, rounded down. Six digits count
  // (num < 2^20, so num << 40 cannot overflow).
  uint64_t num = 0, den = 1;
  for (size_t k = 0; k < fraction.size() && k < 6; ++k) {
    num = num * 10 + uint64_t(fraction[k] - '0');
    den *= 10;
  }
  if (num != 0) {
    if (shift == 0) return bad("a fraction of a byte");
    if (__builtin_add_overflow(bytes, (num << shift) / den, &bytes)) return bad("too large");
  }
  return bytes;
}

}  // namespace ob::util
