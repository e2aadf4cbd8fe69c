#include "offload_build/util/strings.hpp"

#include <algorithm>
#include <numeric>

namespace ob::util {

std::string shell_quote(std::string_view arg) {
  if (arg.empty()) return "''";
  const bool safe = std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("@%_+=:,./-").find(c) != std::string_view::npos;
  });
  if (safe) return std::string(arg);
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string shorten(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  // Not inside a UTF-8 sequence: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "... (" + std::to_string(s.size()) + " bytes)";
}

std::string shorten_lines(std::string_view text, size_t max) {
  std::string out;
  for (const auto& line : split(text, '\n')) {
    if (!out.empty()) out += '\n';
    out += shorten(line, max);
  }
  return out;
}

std::string foreign_text(std::string_view s, std::string_view who) {
  std::string out;
  out.reserve(s.size());
  bool line_start = true;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b) {  // ESC: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), or a two-byte sequence
      ++i;
      if (i < s.size() && s[i] == '[') {
        for (++i; i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e); ++i) {
        }
        ++i;
      } else if (i < s.size() && (s[i] == ']' || s[i] == 'P' || s[i] == '_' || s[i] == '^')) {
        for (++i; i < s.size() && s[i] != '\a' && !(s[i] == 0x1b && i + 1 < s.size() && s[i + 1] == '\\'); ++i) {
        }
        i += i < s.size() && s[i] == 0x1b ? 2 : 1;
      } else {
        ++i;
      }
      continue;
    }
    // C1 controls as UTF-8 (U+0080..U+009F: 0xC2 0x80..0x9F) act as escapes on some terminals.
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      i += 2;
      continue;
    }
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      ++i;
      continue;
    }
    if (line_start && s.substr(i).starts_with("offload-build")) out += "[" + std::string(who) + "] ";
    out += s[i];
    line_start = c == '\n';
    ++i;
  }
  return out;
}

}  // namespace ob::util
