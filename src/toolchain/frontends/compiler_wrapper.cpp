// MPI compiler wrappers unwrapped by their own show mode
// (toolchain/frontends/compiler_wrapper.hpp).
#include "offload_build/toolchain/frontends/compiler_wrapper.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::frontend {

namespace {

constexpr std::array<std::string_view, 13> kWrapperNames{
    "mpicc",  "mpicxx",  "mpic++",   "mpiCC",  "mpif77",  "mpif90", "mpifort",
    "mpiicc", "mpiicpc", "mpiicpx", "mpiicx", "mpiifort", "mpiifx"};

// A show mode answers at once; one that does not is not a wrapper we know.
constexpr int kShowTimeoutMs = 10'000;
constexpr std::string_view kPlaceholder = "@offload-build-arg-";

constexpr const char* kSpace = " \t\n\r\v\f";

bool has_space(std::string_view s) { return s.find_first_of(kSpace) != std::string_view::npos; }

// A show mode's answer, split at white space (it quotes nothing).
std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> words;
  for (size_t b = s.find_first_not_of(kSpace); b != std::string_view::npos; b = s.find_first_not_of(kSpace, b)) {
    const size_t e = std::min(s.find_first_of(kSpace, b), s.size());
    words.emplace_back(s.substr(b, e - b));
    b = e;
  }
  return words;
}

}  // namespace

bool is_compiler_wrapper_name(std::string_view program) {
  std::string name = fs::path(program).filename().string();
  for (std::string_view suffix : {".openmpi", ".mpich"})
    if (util::ends_with(name, suffix)) name.resize(name.size() - suffix.size());
  for (auto known : kWrapperNames)
    if (name == known) return true;
  return false;
}

Result<Unwrapped> unwrap_compiler(const std::vector<std::string>& argv, const fs::path& program,
                                  const fs::path& cwd) {
  const std::string name = fs::path(argv.front()).filename().string();
  std::error_code ec;
  // Open MPI's wrappers are all links to one program, opal_wrapper.
  const bool open_mpi = fs::canonical(program, ec).filename() == "opal_wrapper";
  Unwrapped u;
  u.family = open_mpi ? "Open MPI" : "MPICH";
  std::vector<std::string> ask{program.string(), open_mpi ? "--showme" : "-show"};
  std::vector<std::string> held;  // arguments with white space, by placeholder number
  for (size_t i = 1; i < argv.size(); ++i) {
    if (has_space(argv[i])) {
      ask.push_back(fmt::format("{}{}", kPlaceholder, held.size()));
      held.push_back(argv[i]);
    } else {
      ask.push_back(argv[i]);
    }
  }
  auto shown = process::capture(process::Command{ask, cwd, {}}, kShowTimeoutMs);
  if (!shown) return Error{fmt::format("{} ({}): {}", name, u.family, shown.error().message)};
  if (shown->exit_code != 0)
    return Error{fmt::format("{} ({}) {} exited with status {}: {}", name, u.family, ask[1], shown->exit_code,
                             util::shorten(util::trim(shown->err), 200))};
  for (const auto& word : words_of(shown->out)) {
    if (util::starts_with(word, kPlaceholder)) {
      size_t n = 0;
      const auto digits = std::string_view(word).substr(kPlaceholder.size());
      const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (err != std::errc{} || end != digits.data() + digits.size() || n >= held.size())
        return Error{fmt::format("{} ({}) {}: an argument it printed is not one it was given: {}", name,
                                 u.family, ask[1], word)};
      u.command.push_back(held[n]);
    } else {
      u.command.push_back(word);
    }
  }
  if (u.command.empty())
    return Error{fmt::format("{} ({}) {} printed no command", name, u.family, ask[1])};
  return u;
}

}  // namespace ob::toolchain::frontend
