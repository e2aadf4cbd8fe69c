// Tokenizing Rust source for the kernel check: identifiers, punctuation and
// string literals with line numbers; comments dropped, char literals kept whole.
#include <cctype>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::toolchain::rust {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// r"..", r#".."#, br".." : the index of the opening quote, else npos.
size_t raw_string_open(std::string_view s, size_t i) {
  size_t k = i + (s[i] == 'r' ? 1 : (s.compare(i, 2, "br") == 0 ? 2 : 0));
  if (k == i) return std::string_view::npos;
  while (k < s.size() && s[k] == '#') ++k;
  return k < s.size() && s[k] == '"' ? k : std::string_view::npos;
}

}  // namespace

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  int line = 1;
  size_t i = 0, line_start = 0;
  auto skip_to = [&](size_t end) {
    for (; i < end && i < s.size(); ++i)
      if (s[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
  };
  while (i < s.size()) {
    const char c = s[i];
    const int start_line = line;
    int start_column = 1;  // in characters, as rustc counts them
    for (size_t k = line_start; k < i; ++k) start_column += (static_cast<unsigned char>(s[k]) & 0xC0) != 0x80;
    if (std::isspace(static_cast<unsigned char>(c))) {
      skip_to(i + 1);
    } else if (s.compare(i, 2, "//") == 0) {
      size_t nl = s.find('\n', i);
      skip_to(nl == std::string_view::npos ? s.size() : nl);
    } else if (s.compare(i, 2, "/*") == 0) {
      int depth = 0;
      do {
        if (s.compare(i, 2, "/*") == 0) { ++depth; skip_to(i + 2); }
        else if (s.compare(i, 2, "*/") == 0) { --depth; skip_to(i + 2); }
        else skip_to(i + 1);
      } while (depth > 0 && i < s.size());
    } else if (size_t open = raw_string_open(s, i); open != std::string_view::npos) {
      const std::string close = "\"" + std::string(open - i - (c == 'b' ? 2 : 1), '#');
      size_t end = s.find(close, open + 1);
      if (end == std::string_view::npos) end = s.size();
      out.push_back({Token::Str, std::string(s.substr(open + 1, end - open - 1)), start_line, start_column});
      skip_to(end + close.size());
    } else if (c == '"' || (c == 'b' && i + 1 < s.size() && s[i + 1] == '"')) {
      size_t j = i + (c == 'b' ? 2 : 1);
      std::string text;
      while (j < s.size() && s[j] != '"') {
        if (s[j] == '\\' && j + 1 < s.size()) text += s[j++];
        text += s[j++];
      }
      out.push_back({Token::Str, text, start_line, start_column});
      skip_to(j + 1);
    } else if (c == '\'') {
      // 'x', 'é', '\n', '\u{..}' are char literals; 'a (no quote right after) is a lifetime.
      size_t j = std::string_view::npos;
      if (i + 1 < s.size() && s[i + 1] == '\\') {
        j = s.find('\'', i + 3);
      } else if (i + 1 < s.size()) {
        const unsigned char lead = static_cast<unsigned char>(s[i + 1]);
        const size_t len = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (i + 1 + len < s.size() && s[i + 1 + len] == '\'') j = i + 1 + len;
      }
      if (j == std::string_view::npos) {  // lifetime or label
        j = i + 1;
        while (j < s.size() && ident_char(s[j])) ++j;
        out.push_back({Token::Other, std::string(s.substr(i, j - i)), start_line, start_column});
        skip_to(j);
      } else {
        out.push_back({Token::Other, std::string(s.substr(i, j + 1 - i)), start_line, start_column});
        skip_to(j + 1);
      }
    } else if (ident_start(c)) {
      size_t j = i;
      if (s.compare(i, 2, "r#") == 0) j += 2;
      const size_t begin = j;
      while (j < s.size() && ident_char(s[j])) ++j;
      out.push_back({Token::Ident, std::string(s.substr(begin, j - begin)), start_line, start_column});
      skip_to(j);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && (ident_char(s[j]) || (s[j] == '.' && j + 1 < s.size() &&
                                                   std::isdigit(static_cast<unsigned char>(s[j + 1])))))
        ++j;
      out.push_back({Token::Other, std::string(s.substr(i, j - i)), start_line, start_column});
      skip_to(j);
    } else {
      out.push_back({Token::Punct, std::string(1, c), start_line, start_column});
      skip_to(i + 1);
    }
  }
  return out;
}

}  // namespace ob::toolchain::rust
