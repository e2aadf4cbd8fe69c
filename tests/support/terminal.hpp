// Running offload-build on a simulated terminal (util-linux `script` gives the
// child a pty) and reading what a person would see on it.
#pragma once

#include <string>
#include <vector>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"

namespace ob::test {

inline bool have_script() {
  static const bool found = toolchain::find_in_path("script", getenv("PATH") ? getenv("PATH") : "").has_value();
  return found;
}

// Run offload-build with `args` on a pty `columns` wide. `env` applies to the
// offload-build process; CI, NO_COLOR and CLICOLOR_FORCE are unset and TERM is
// xterm unless `env` says otherwise. Returns everything written to the pty
// (stdout and stderr together; the pty turns "\n" into "\r\n").
inline process::Captured run_ob_on_terminal(const std::vector<std::string>& args, Env env = {},
                                         int columns = 200) {
  std::vector<std::string> argv{OB_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string cmd = "stty cols " + std::to_string(columns) + " rows 50 && exec " + util::shell_join(argv);
  env.insert(env.begin(), {{"CI", std::nullopt},
                           {"NO_COLOR", std::nullopt},
                           {"CLICOLOR_FORCE", std::nullopt},
                           {"TERM", "xterm"}});
  return run_tool({"script", "-qfec", cmd, "/dev/null"}, {}, std::move(env));
}

// What a terminal shows after receiving `raw`: "\r" returns to column 0,
// "\x1b[K" clears to the end of the line, "\n" starts a new line; other escape
// sequences (colors) are dropped. One string per line.
inline std::vector<std::string> render_terminal(const std::string& raw) {
  std::vector<std::string> lines{""};
  size_t col = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    std::string& line = lines.back();
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      lines.emplace_back();
      col = 0;
    } else if (c == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
      size_t j = i + 2;
      while (j < raw.size() && !std::isalpha(static_cast<unsigned char>(raw[j]))) ++j;
      if (j < raw.size() && raw[j] == 'K') line.erase(std::min(col, line.size()));
      i = j;
    } else {
      if (col < line.size()) line[col] = c;
      else line.push_back(c);
      ++col;
    }
  }
  if (lines.back().empty()) lines.pop_back();
  return lines;
}

}  // namespace ob::test
