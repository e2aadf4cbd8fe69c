#include "offload_build/cache/depfile.hpp"

#include <set>

namespace ob::cache {

std::vector<std::string> parse_depfile(std::string_view text) {
  std::vector<std::string> deps;
  std::set<std::string> seen;
  std::string word;
  bool in_prereqs = false;  // after the rule's ':'
  auto finish_word = [&] {
    if (word.empty()) return;
    if (!in_prereqs && word.back() == ':') {
      in_prereqs = true;  // "target:" glued to the colon
    } else if (in_prereqs && seen.insert(word).second) {
      deps.push_back(word);
    }
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char n = text[i + 1];
      if (n == '\n') { finish_word(); ++i; continue; }                 // continuation
      if (n == '\r' && i + 2 < text.size() && text[i + 2] == '\n') { finish_word(); i += 2; continue; }
      if (n == ' ' || n == '#' || n == '\\') { word += n; ++i; continue; }  // escaped char
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') { word += '$'; ++i; continue; }
    if (c == '\n') {
      finish_word();
      in_prereqs = false;  // next line starts a new rule
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') { finish_word(); continue; }
    if (c == ':' && !in_prereqs && (i + 1 == text.size() || text[i + 1] == ' ' ||
                                    text[i + 1] == '\n' || text[i + 1] == '\t')) {
      word.clear();  // the target
      in_prereqs = true;
      continue;
    }
    word += c;
  }
  finish_word();
  return deps;
}

}  // namespace ob::cache
