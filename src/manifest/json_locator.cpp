// JsonLocator: a small, forgiving JSON scanner that records where every value
// and key starts. It runs only to place a diagnostic, never to validate.
#include "offload_build/manifest/json_locator.hpp"

#include <cstdint>

namespace ob::manifest {

TextPos text_position(std::string_view text, size_t offset) {
  TextPos pos;
  const size_t end = offset < text.size() ? offset : text.size();
  const size_t bom = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // not a column
  for (size_t i = bom; i < end; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++pos.line;
      pos.column = 1;
    } else if ((c & 0xC0) != 0x80) {  // not a UTF-8 continuation byte
      ++pos.column;
    }
  }
  return pos;
}

std::string json_pointer(std::string_view parent, std::string_view key) {
  std::string out(parent);
  out += '/';
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string json_pointer(std::string_view parent, size_t index) {
  return std::string(parent) + '/' + std::to_string(index);
}

std::string format_diagnostic(const std::filesystem::path& file, std::optional<TextPos> pos,
                              std::string_view message) {
  std::string out = file.string();
  if (pos) out += ':' + std::to_string(pos->line) + ':' + std::to_string(pos->column);
  out += ": error: ";
  out += message;
  return out;
}

// Recursive descent over the text; every function returns false on malformed
// input so the scan simply stops there.
class JsonLocator::Scanner {
 public:
  Scanner(JsonLocator& loc) : loc_(loc), t_(loc.text_) {}

  void run() {
    if (t_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;  // UTF-8 byte order mark
    skip_ws();
    value("", 0);
  }

 private:
  static constexpr int kMaxDepth = 256;

  void skip_ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r'))
      ++i_;
  }

  bool eat(char c) {
    skip_ws();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  bool value(const std::string& ptr, int depth) {
    skip_ws();
    if (i_ >= t_.size() || depth > kMaxDepth) return false;
    loc_.values_[ptr] = i_;
    const char c = t_[i_];
    if (c == '{') return object(ptr, depth);
    if (c == '[') return array(ptr, depth);
    if (c == '"') return string(nullptr);
    const size_t start = i_;  // number, true, false, null
    while (i_ < t_.size() && std::string_view(",]} \t\r\n").find(t_[i_]) == std::string_view::npos)
      ++i_;
    return i_ > start;
  }

  bool object(const std::string& ptr, int depth) {
    ++i_;  // '{'
    if (eat('}')) return true;
    do {
      skip_ws();
      const size_t key_at = i_;
      std::string key;
      if (i_ >= t_.size() || t_[i_] != '"' || !string(&key)) return false;
      const std::string member = json_pointer(ptr, key);
      loc_.keys_[member] = key_at;
      if (!eat(':') || !value(member, depth + 1)) return false;
    } while (eat(','));
    return eat('}');
  }

  bool array(const std::string& ptr, int depth) {
    ++i_;  // '['
    if (eat(']')) return true;
    size_t index = 0;
    do {
      if (!value(json_pointer(ptr, index++), depth + 1)) return false;
    } while (eat(','));
    return eat(']');
  }

  // A string starting at t_[i_] == '"'; decodes escapes into `out` if given.
  bool string(std::string* out) {
    ++i_;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (c != '\\') {
        if (out) *out += c;
        continue;
      }
      if (i_ >= t_.size()) return false;
      c = t_[i_++];
      if (c == 'u') {
        uint32_t cp = 0;
        if (!hex4(cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00 && t_.substr(i_, 2) == "\\u") {
          uint32_t low = 0;
          i_ += 2;
          if (!hex4(low)) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        if (out) append_utf8(*out, cp);
      } else if (out) {
        const std::string_view from = "bfnrt", to = "\b\f\n\r\t";
        const size_t k = from.find(c);
        *out += k == std::string_view::npos ? c : to[k];  // \" \\ \/ map to themselves
      }
    }
    if (i_ >= t_.size()) return false;
    ++i_;  // closing '"'
    return true;
  }

  bool hex4(uint32_t& cp) {
    if (i_ + 4 > t_.size()) return false;
    for (int k = 0; k < 4; ++k) {
      const char h = t_[i_++];
      const int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      cp = cp * 16 + static_cast<uint32_t>(d);
    }
    return true;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  JsonLocator& loc_;
  std::string_view t_;
  size_t i_ = 0;
};

JsonLocator::JsonLocator(std::string text) : text_(std::move(text)) { Scanner(*this).run(); }

std::optional<TextPos> JsonLocator::value(std::string_view pointer) const {
  auto it = values_.find(pointer);
  if (it == values_.end()) return std::nullopt;
  return text_position(text_, it->second);
}

std::optional<TextPos> JsonLocator::key(std::string_view pointer) const {
  auto it = keys_.find(pointer);
  if (it == keys_.end()) return std::nullopt;
  return text_position(text_, it->second);
}

}  // namespace ob::manifest
