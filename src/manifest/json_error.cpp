// Turning nlohmann's parse_error into a located, readable JSON syntax error.
//
// nlohmann reports the 1-based byte offset of the last character it read, which
// for a string, number or bare word is the token's last (or the following)
// character; we step back to where the token starts, like a compiler would.
#include <cctype>
#include <string>

#include "offload_build/manifest/json_locator.hpp"

namespace ob::manifest {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_number_char(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) || std::string_view("+-.eE").find(c) != std::string_view::npos;
}
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error
//  while parsing object key - unexpected '}'; expected string literal; last read: 'x'"
// -> "unexpected '}'; expected string literal"
std::string explanation_of(std::string_view what) {
  std::string_view rest = what;
  if (starts_with(rest, "[json.exception.") && rest.find("] ") != std::string_view::npos)
    rest = rest.substr(rest.find("] ") + 2);
  if (starts_with(rest, "parse error") && rest.find(": ") != std::string_view::npos)
    rest = rest.substr(rest.find(": ") + 2);
  if (starts_with(rest, "syntax error while parsing ")) {
    const size_t dash = rest.find(" - ");
    if (dash != std::string_view::npos) rest = rest.substr(dash + 3);
  }
  std::string out(rest);
  const size_t last_read = out.find("; last read: '");
  if (last_read != std::string::npos) {
    size_t end = out.find("'; expected ", last_read + 14);
    end = end == std::string::npos ? out.size() : end + 1;
    out.erase(last_read, end - last_read);
  }
  return out;
}

// Offset of the start of the token whose last read character is at `i`.
size_t token_start(std::string_view text, size_t i, std::string_view expl) {
  size_t start = i;
  if (starts_with(expl, "unexpected string literal")) {
    while (start > 0) {
      --start;
      size_t backslashes = 0;
      while (start > backslashes && text[start - 1 - backslashes] == '\\') ++backslashes;
      if (text[start] == '"' && backslashes % 2 == 0) break;
    }
  } else if (starts_with(expl, "unexpected number literal") || starts_with(expl, "invalid number")) {
    while (start > 0 && is_number_char(text[start - 1])) --start;
  } else if (starts_with(expl, "invalid literal") ||
             (starts_with(expl, "unexpected ") && expl.find(" literal;") != std::string_view::npos)) {
    while (start > 0 && is_word_char(text[start - 1])) --start;
  }
  return start;
}

size_t previous_non_space(std::string_view text, size_t i) {
  while (i > 0 && is_space(text[i - 1])) --i;
  return i;  // one past the previous non-space character, or 0
}

}  // namespace

JsonSyntaxError describe_json_error(std::string_view text, size_t byte, std::string_view what) {
  std::string expl = explanation_of(what);
  if (byte == 0) {  // no offset (number overflow): find the quoted token instead
    const size_t open = expl.find('\''), close = expl.rfind('\'');
    const size_t at = open < close ? text.find(expl.substr(open + 1, close - open - 1)) : std::string::npos;
    return {at == std::string::npos ? TextPos{} : text_position(text, at), "invalid JSON: " + expl};
  }
  const size_t i = byte - 1;

  if (i >= text.size() || starts_with(expl, "unexpected end of input")) {
    const size_t end = previous_non_space(text, text.size());
    return {text_position(text, end), "invalid JSON: " + expl};
  }

  const size_t start = token_start(text, i, expl);
  const size_t before = previous_non_space(text, start);
  if ((starts_with(expl, "unexpected '}'") || starts_with(expl, "unexpected ']'")) && before > 0 &&
      text[before - 1] == ',') {
    expl = expl.substr(0, 14) + " after ','; JSON allows no trailing comma, remove the last ','";
  } else if (starts_with(expl, "invalid literal")) {
    size_t end = start;
    while (end < text.size() && is_word_char(text[end])) ++end;
    if (text[start] == '\'') {
      expl = "single quotes are not allowed; write strings and keys in double quotes";
    } else if (end > start) {
      const std::string word(text.substr(start, end - start));
      const size_t expected = expl.find("; expected ");
      expl = "invalid literal \"" + word + "\"" +
             (expected != std::string::npos
                  ? expl.substr(expected)
                  : "; write a \"string\", a number, true, false, null, a [list] or an {object}");
    }
  }
  return {text_position(text, start), "invalid JSON: " + expl};
}

}  // namespace ob::manifest
