// Source positions for JSON documents. nlohmann::json 3.11 keeps no positions,
// so the manifest is parsed with nlohmann and, only when a diagnostic is needed,
// the raw text is scanned again here to map JSON pointers to line:column.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ob::manifest {

// A 1-based line and column; columns count characters (UTF-8 code points).
struct TextPos {
  size_t line = 1;
  size_t column = 1;
  bool operator==(const TextPos&) const = default;
};

// Line:column of the byte at `offset` (0-based) in `text`; an offset at or past
// the end gives the position just after the last character.
TextPos text_position(std::string_view text, size_t offset);

// JSON pointer (RFC 6901) building blocks: json_pointer("/defines", 2) is
// "/defines/2", json_pointer("", "a/b") is "/a~1b".
std::string json_pointer(std::string_view parent, std::string_view key);
std::string json_pointer(std::string_view parent, size_t index);

// Maps each JSON pointer of a document to the position of its value (the first
// character: `{`, `[`, `"`, a digit...) and, for object members, of its key (the
// opening quote). The root value has pointer "". With duplicate keys the last one
// wins, as in nlohmann::json. Scanning stops quietly at the first syntax error.
class JsonLocator {
 public:
  explicit JsonLocator(std::string text);

  std::optional<TextPos> value(std::string_view pointer) const;
  std::optional<TextPos> key(std::string_view pointer) const;

 private:
  class Scanner;

  std::string text_;
  std::map<std::string, size_t, std::less<>> values_;  // pointer -> byte offset
  std::map<std::string, size_t, std::less<>> keys_;
};

// A JSON syntax error, located and explained for people.
struct JsonSyntaxError {
  TextPos pos;
  std::string message;  // "invalid JSON: unexpected '}'; expected string literal"
};

// Turn nlohmann's parse_error (its 1-based `byte` and what()) into a position at
// the start of the offending token and a short explanation. With `byte` 0 (other
// nlohmann exceptions, e.g. number overflow) the token quoted in `what` is looked up.
JsonSyntaxError describe_json_error(std::string_view text, size_t byte, std::string_view what);

// "FILE:LINE:COL: error: MESSAGE", or "FILE: error: MESSAGE" without a position.
std::string format_diagnostic(const std::filesystem::path& file, std::optional<TextPos> pos,
                              std::string_view message);

}  // namespace ob::manifest
