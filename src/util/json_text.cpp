#include "offload_build/util/json_text.hpp"

namespace ob::util {

namespace {

constexpr std::string_view kEscape = "\xEF\xA3\xBF";  // U+F8FF (private use)

// Length of the valid UTF-8 sequence at s[i], 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

template <class F>
nlohmann::json map_strings(const nlohmann::json& j, const F& f) {
  if (j.is_string()) return f(j.get_ref<const std::string&>());
  if (j.is_array()) {
    auto out = nlohmann::json::array();
    for (const auto& v : j) out.push_back(map_strings(v, f));
    return out;
  }
  if (j.is_object()) {
    auto out = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) out[f(k)] = map_strings(v, f);
    return out;
  }
  return j;
}

}  // namespace

bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escape_bytes(std::string_view s) {
  if (is_utf8(s) && s.find(kEscape) == std::string_view::npos) return std::string(s);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, kEscape.size()) == kEscape) {
      out.append(kEscape).append(kEscape);
      i += kEscape.size();
      continue;
    }
    size_t n = utf8_length(s, i);
    if (n == 0) {
      const auto c = static_cast<unsigned char>(s[i]);
      out.append(kEscape);
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string unescape_bytes(std::string_view s) {
  if (s.find(kEscape) == std::string_view::npos) return std::string(s);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, kEscape.size()) != kEscape) {
      out.push_back(s[i++]);
      continue;
    }
    i += kEscape.size();
    if (s.substr(i, kEscape.size()) == kEscape) {
      out.append(kEscape);
      i += kEscape.size();
    } else if (i + 2 <= s.size() && hex_value(s[i]) >= 0 && hex_value(s[i + 1]) >= 0) {
      out.push_back(static_cast<char>(hex_value(s[i]) * 16 + hex_value(s[i + 1])));
      i += 2;
    } else {
      out.append(kEscape);  // not written by escape_bytes: keep as is
    }
  }
  return out;
}

std::string dump_lossless(const nlohmann::json& j, int indent) {
  return map_strings(j, [](const std::string& s) { return escape_bytes(s); }).dump(indent);
}

nlohmann::json parse_lossless(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  // Nothing escape_bytes wrote (nor a \u escape that could spell it): as parsed.
  if (j.is_discarded() || (text.find(kEscape) == std::string_view::npos && text.find("\\u") == std::string_view::npos))
    return j;
  return map_strings(j, [](const std::string& s) { return unescape_bytes(s); });
}

std::string dump_replacing(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ob::util
