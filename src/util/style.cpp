#include "offload_build/util/style.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

namespace ob::util {

namespace {

std::atomic<bool> g_color{false};

}  // namespace

std::optional<ColorChoice> parse_color_choice(std::string_view text) {
  if (text == "auto") return ColorChoice::Auto;
  if (text == "always") return ColorChoice::Always;
  if (text == "never") return ColorChoice::Never;
  return std::nullopt;
}

bool decide_color(ColorChoice choice, const ColorEnvironment& env, int fd) {
  if (choice == ColorChoice::Always) return true;
  if (choice == ColorChoice::Never) return false;
  if (env.no_color && !env.no_color->empty()) return false;  // https://no-color.org
  if (env.clicolor_force && !env.clicolor_force->empty() && *env.clicolor_force != "0") return true;
  if (env.term && *env.term == "dumb") return false;
  return isatty(fd) == 1;
}

void set_color(bool enabled) { g_color = enabled; }

std::string paint(Style style, std::string_view text) {
  if (!g_color) return std::string(text);
  const char* start = "";
  switch (style) {
    case Style::Error: start = "\x1b[1;31m"; break;    // bold red, as clang
    case Style::Warning: start = "\x1b[1;35m"; break;  // bold magenta, as clang
    case Style::Summary: start = "\x1b[1;32m"; break;  // bold green
    case Style::Bold: start = "\x1b[1m"; break;
  }
  return std::string(start) + std::string(text) + "\x1b[0m";
}

std::string paint_diagnostic(std::string_view message) {
  if (!g_color) return std::string(message);
  const std::string_view first = message.substr(0, message.find('\n'));
  for (auto [word, style] : {std::pair{std::string_view("error:"), Style::Error},
                             std::pair{std::string_view("warning:"), Style::Warning}}) {
    const size_t at = first.find(word);
    if (at == std::string_view::npos) continue;
    return std::string(message.substr(0, at)) + paint(style, word) +
           std::string(message.substr(at + word.size()));
  }
  return std::string(message);
}

}  // namespace ob::util
