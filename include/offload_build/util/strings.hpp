// Small string helpers shared by every stage.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ob::util {

// Quote one argument for a POSIX shell so the printed command can be pasted back.
std::string shell_quote(std::string_view arg);
// Join an argv into one re-runnable shell line.
std::string shell_join(const std::vector<std::string>& argv);

bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string trim(std::string_view s);

// `s` as is when at most `max` bytes, else its start and "... (N bytes)": for
// quoting user input in messages without printing 100 KB of it.
std::string shorten(std::string_view s, size_t max = 200);
// Each line of `text` shortened so (a message quoting a 100 KB value stays readable).
std::string shorten_lines(std::string_view text, size_t max);

// Text from someone else (an engine's diagnostics, a server's status) made
// safe to print and store: terminal escape sequences and control characters
// but newline and tab removed, and every line that starts like one of ours
// ("offload-build: ...") marked as `who`'s ("[who] offload-build: ...").
std::string foreign_text(std::string_view s, std::string_view who);

// Levenshtein distance, for "did you mean ...?" hints.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word`, if it is close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// Whether `t` is one of `set` (a table of spellings).
template <class Set>
bool is_one_of(std::string_view t, const Set& set) {
  for (std::string_view s : set)
    if (t == s) return true;
  return false;
}
// The first of `set` that `t` starts with; empty when none does.
template <class Set>
std::string_view prefix_in(std::string_view t, const Set& set) {
  for (std::string_view s : set)
    if (t.substr(0, s.size()) == s) return s;
  return {};
}

}  // namespace ob::util
