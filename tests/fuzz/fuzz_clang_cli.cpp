// Launcher mode's clang argv parser, response files included: the input is a
// NUL-separated argv; an argument "@rsp" names the rest of the input as a
// response file's text (parsed by split_response_file, as expand_response_files does).
#include <cstdint>
#include <string>
#include <vector>

#include "offload_build/toolchain/frontends/clang_cli.hpp"

using namespace ob;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> argv{"clang"};
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\0') continue;
    std::string arg = text.substr(start, i - start);
    start = i + 1;
    if (arg == "@rsp") {
      const std::string rest = start < text.size() ? text.substr(start) : std::string();
      for (auto& a : toolchain::clang_cli::split_response_file(rest)) argv.push_back(std::move(a));
      break;
    }
    argv.push_back(std::move(arg));
  }
  auto parsed = toolchain::clang_cli::parse(argv);
  if (!parsed.compile && parsed.pass_reason.empty()) __builtin_trap();  // a reason to pass through
  // A one-step build: each source's compile and the link, or a reason.
  auto build = toolchain::clang_cli::parse_build(argv);
  if (build.build) {
    std::vector<std::string> objects;
    for (size_t n = 0; n < build.build->sources.size(); ++n) {
      objects.push_back("w/" + std::to_string(n) + ".o");
      toolchain::clang_cli::parse(build.build->compile_argv(n, objects.back()));
    }
    if (build.build->link_argv(objects).size() < argv.size()) __builtin_trap();
  } else if (build.one_step && build.pass_reason.empty()) {
    __builtin_trap();
  }
  return 0;
}
