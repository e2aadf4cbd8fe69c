// The build picture (--timings) as a browser draws it: Debian's chromium in
// headless mode loads the page, runs its script and dumps the resulting DOM;
// the bars and table rows are read back from it. Without chromium, the tests
// that need it skip (OB_SKIP; not an allowed reason: setup.sh installs it).
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace ob::test {

// The chromium binary, or "" when none is installed.
inline const std::string& chromium_binary() {
  static const std::string found = [] {
    for (const char* name : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
      if (access(name, X_OK) == 0) return std::string(name);
    return std::string();
  }();
  return found;
}

#define OB_REQUIRE_CHROMIUM()                                                                   \
  do {                                                                                          \
    if (::ob::test::chromium_binary().empty())                                                  \
      OB_SKIP("no chromium (scripts/setup.sh installs it) to draw the --timings page");        \
  } while (0)

// The DOM of `page` after its script ran (chromium --headless --dump-dom),
// under a private profile; at most 120 s.
inline std::string rendered_dom(const fs::path& page) {
  TempDir profile("ob-chromium");
  auto r = run_tool({"timeout", "120", chromium_binary(), "--headless", "--disable-gpu", "--no-sandbox",
                     "--no-first-run", "--user-data-dir=" + profile.path().string(), "--dump-dom",
                     "file://" + page.string()},
                    profile.path(), {{"HOME", profile.path().string()}});
  INFO(r.err.substr(0, 4000));
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// One <rect class="bar ..."> of the drawn page.
struct Bar {
  std::string cls;  // its class attribute
  std::map<std::string, std::string> data;  // data-job, data-kind, data-status, ...
  bool has_class(const std::string& c) const {
    return (" " + cls + " ").find(" " + c + " ") != std::string::npos;
  }
};

inline std::vector<Bar> bars_of(const std::string& dom) {
  std::vector<Bar> bars;
  static const std::regex rect(R"(<rect ([^>]*)>)"), attr(R"re(([a-z-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), rect); it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1];
    Bar b;
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr); a != std::sregex_iterator(); ++a) {
      const std::string name = (*a)[1], value = (*a)[2];
      if (name == "class") b.cls = value;
      else if (name.rfind("data-", 0) == 0) b.data[name.substr(5)] = value;
    }
    if (b.has_class("bar")) bars.push_back(std::move(b));
  }
  return bars;
}

// The cells of the table row <tr data-key="KEY"> in the table with id `table`.
inline std::vector<std::string> table_row(const std::string& dom, const std::string& table, const std::string& key) {
  const size_t at = dom.find("id=\"" + table + "\"");
  if (at == std::string::npos) return {};
  const size_t row = dom.find("<tr data-key=\"" + key + "\">", at);
  if (row == std::string::npos) return {};
  const std::string text = dom.substr(row, dom.find("</tr>", row) - row);
  std::vector<std::string> cells;
  static const std::regex td(R"(<td[^>]*>([^<]*)</td>)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), td); it != std::sregex_iterator(); ++it)
    cells.push_back((*it)[1]);
  return cells;
}

// The value of attribute `name` on <html>, or nullopt.
inline std::optional<std::string> html_attribute(const std::string& dom, const std::string& name) {
  const size_t html = dom.find("<html");
  const size_t end = dom.find('>', html);
  if (html == std::string::npos || end == std::string::npos) return std::nullopt;
  const std::string tag = dom.substr(html, end - html);
  const size_t at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return std::nullopt;
  const size_t from = at + name.size() + 3;
  return tag.substr(from, tag.find('"', from) - from);
}

}  // namespace ob::test
