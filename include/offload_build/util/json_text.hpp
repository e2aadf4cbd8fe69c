// JSON text for strings that are any bytes (file names need not be UTF-8).
//
// nlohmann::json refuses to dump a string that is not valid UTF-8 (it throws
// type_error.316). Two deliberate ways out:
//  - lossless, for what we read back (cache metadata, build state, probe
//    memos, keys): every invalid byte becomes U+F8FF and two hex digits, and a
//    U+F8FF already in the text is doubled, so the mapping is reversible and
//    injective, and leaves valid UTF-8 without U+F8FF unchanged;
//  - for people and other tools (--report, compile_commands.json, `cache stats
//    --json`): invalid bytes become U+FFFD, as the JSON spec expects.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ob::util {

bool is_utf8(std::string_view s);
std::string escape_bytes(std::string_view s);    // lossless form of `s`, valid UTF-8
std::string unescape_bytes(std::string_view s);  // inverse of escape_bytes

// dump() with every string and object key escaped (lossless); never throws.
std::string dump_lossless(const nlohmann::json& j, int indent = -1);
// parse() undoing dump_lossless; a discarded value when `text` is not JSON.
nlohmann::json parse_lossless(std::string_view text);
// dump() with invalid UTF-8 replaced by U+FFFD; never throws.
std::string dump_replacing(const nlohmann::json& j, int indent = -1);

}  // namespace ob::util
