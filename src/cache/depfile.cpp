#include "offload_build/cache/depfile.hpp"

#include <algorithm>
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

std::vector<std::string> parse_env_deps(std::string_view text) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  constexpr std::string_view kLine = "# env-dep:";
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, kLine.size()) == kLine) {
      std::string name(line.substr(kLine.size(), line.find('=') == std::string_view::npos
                                                     ? std::string_view::npos
                                                     : line.find('=') - kLine.size()));
      if (!name.empty() && name.back() == '\r') name.pop_back();
      if (!name.empty() && seen.insert(name).second) names.push_back(std::move(name));
    }
    at = end + 1;
  }
  return names;
}

}  // namespace ob::cache
