// Colors for offload-build's own messages: only the "error:" and "warning:"
// prefixes and the summary line are colored, and only when the process-wide
// choice (set once by the CLI from --color, NO_COLOR, CLICOLOR_FORCE and
// whether stderr is a terminal) says so.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ob::util {

enum class ColorChoice { Auto, Always, Never };

// "auto", "always", "never"; nullopt for anything else.
std::optional<ColorChoice> parse_color_choice(std::string_view text);

// Always/Never win; Auto: off when $NO_COLOR is set and not empty, on when
// $CLICOLOR_FORCE is set and not "0", otherwise on when `fd` is a terminal and
// $TERM is not "dumb".
struct ColorEnvironment {
  std::optional<std::string> no_color, clicolor_force, term;  // $NO_COLOR, $CLICOLOR_FORCE, $TERM
};
bool decide_color(ColorChoice choice, const ColorEnvironment& env, int fd = 2);

void set_color(bool enabled);

enum class Style { Error, Warning, Summary, Bold };

// `text` wrapped in the style's escape sequences when color is enabled.
std::string paint(Style style, std::string_view text);

// A diagnostic's first "error:" or "warning:" painted (the rest unchanged).
std::string paint_diagnostic(std::string_view message);

}  // namespace ob::util
