// Offload target spellings: host, x86_64, sm_90, gfx90a, or TRIPLE:ARCH.
#include "offload_build/manifest/target.hpp"

#include "offload_build/manifest/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "offload_build/util/strings.hpp"

namespace ob::manifest {
namespace {

constexpr std::string_view kAccepted =
    "accepted: host, x86_64, sm_NN (NVIDIA, e.g. sm_90, sm_90a), gfxNNN (AMD, e.g. gfx90a, "
    "gfx942, gfx1030), or TRIPLE:ARCH with TRIPLE one of x86_64-unknown-linux-gnu (arch "
    "generic), nvptx64-nvidia-cuda, amdgcn-amd-amdhsa";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }

// sm_ followed by at least two digits and an optional feature letter (sm_90a, sm_100f).
bool is_nvptx_arch(std::string_view arch) {
  if (!util::starts_with(arch, "sm_")) return false;
  std::string_view rest = arch.substr(3);
  if (!rest.empty() && rest.back() >= 'a' && rest.back() <= 'z') rest.remove_suffix(1);
  return rest.size() >= 2 && std::all_of(rest.begin(), rest.end(), is_digit);
}

// gfx followed by at least three lowercase hex-like characters, starting with a digit.
bool is_amdgcn_arch(std::string_view arch) {
  if (!util::starts_with(arch, "gfx")) return false;
  std::string_view rest = arch.substr(3);
  return rest.size() >= 3 && is_digit(rest.front()) &&
         std::all_of(rest.begin(), rest.end(), is_lower_alnum);
}

Target host_target() { return {std::string(kHostTriple), "generic"}; }

// Spellings for "did you mean": the shorthands with common real archs.
const std::vector<std::string>& known_spellings() {
  static const std::vector<std::string> known = {
      "host",    "x86_64",  "sm_90",   "sm_90a",  "sm_80",   "sm_86",   "sm_89",   "sm_70",
      "sm_75",   "sm_100",  "sm_100a", "sm_120",  "sm_60",   "sm_61",   "sm_52",   "sm_50",
      "gfx90a",  "gfx942",  "gfx950",  "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200",
      "gfx1201", "gfx900",  "gfx906",  "gfx908",  "gfx90c",  "gfx940",  "gfx1010", "gfx1031",
      "gfx1032", "gfx1036", "gfx1103", "gfx1150", "gfx1151"};
  return known;
}

std::optional<Target> resolve_known(std::string_view s);

std::optional<std::string> suggest(std::string_view spelling);

// For TRIPLE:ARCH: the nearest known triple with the nearest arch of its family.
std::optional<std::string> suggest_triple_arch(std::string triple, const std::string& arch) {
  static const std::vector<std::string> triples = {
      std::string(kHostTriple), std::string(kNvptxTriple), std::string(kAmdgcnTriple)};
  if (std::find(triples.begin(), triples.end(), triple) == triples.end()) {
    auto near = util::closest_match(triple, triples);
    if (!near) return std::nullopt;
    triple = *near;
  }
  if (triple == kHostTriple) return triple + ":generic";
  std::optional<std::string> fixed = resolve_known(arch) ? arch : suggest(arch);
  if (fixed && resolve_known(*fixed) && resolve_known(*fixed)->triple == triple)
    return triple + ":" + *fixed;
  return std::nullopt;
}

// A likely intended spelling for something that did not resolve.
std::optional<std::string> suggest(std::string_view spelling) {
  std::string lower(spelling);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower != spelling && resolve_known(lower)) return lower;
  if (const size_t colon = lower.find(':'); colon != std::string::npos)
    return suggest_triple_arch(lower.substr(0, colon), lower.substr(colon + 1));
  // Drop separators a user might put in or leave out: sm90, sm-90, gfx_90a.
  std::string bare;
  for (char c : lower)
    if (is_lower_alnum(c)) bare += c;
  if (util::starts_with(bare, "sm") && resolve_known("sm_" + bare.substr(2)))
    return "sm_" + bare.substr(2);
  if (bare != lower && resolve_known(bare)) return bare;
  return util::closest_match(lower, known_spellings());
}

std::optional<Target> resolve_known(std::string_view s) {
  if (s == "host" || s == "x86_64" || s == kHostTriple) return host_target();
  if (is_nvptx_arch(s)) return Target{std::string(kNvptxTriple), std::string(s)};
  if (is_amdgcn_arch(s)) return Target{std::string(kAmdgcnTriple), std::string(s)};
  return std::nullopt;
}

Error unknown(std::string_view spelling, std::string_view why = {}) {
  std::string msg = "unknown offload target \"" + std::string(spelling) + "\"";
  if (!why.empty()) msg += " (" + std::string(why) + ")";
  msg += "; ";
  if (auto hint = suggest(spelling)) msg += "did you mean \"" + *hint + "\"? ";
  return Error::usage(msg + std::string(kAccepted));
}

Result<Target> resolve_triple_arch(std::string_view spelling, size_t colon) {
  const std::string_view triple = spelling.substr(0, colon);
  const std::string_view arch = spelling.substr(colon + 1);
  const std::string t(triple), a(arch);
  if (triple == kHostTriple) {
    if (arch == "generic") return host_target();
    return unknown(spelling, "the host triple takes arch \"generic\"");
  }
  if (triple == kNvptxTriple) {
    if (is_nvptx_arch(arch)) return Target{t, a};
    return unknown(spelling, "an NVIDIA arch is sm_ followed by digits, e.g. " + t + ":sm_90");
  }
  if (triple == kAmdgcnTriple) {
    if (is_amdgcn_arch(arch)) return Target{t, a};
    return unknown(spelling, "an AMD arch is gfx followed by at least 3 characters, e.g. " + t +
                                 ":gfx90a");
  }
  return unknown(spelling, "unknown triple \"" + t + "\"");
}

}  // namespace

TargetFamily Target::family() const {
  if (triple == kNvptxTriple) return TargetFamily::Nvptx;
  if (triple == kAmdgcnTriple) return TargetFamily::Amdgcn;
  return TargetFamily::HostDevice;
}

std::string Target::short_name() const {
  return family() == TargetFamily::HostDevice ? "host" : arch;
}

Result<Target> resolve_target(std::string_view spelling) {
  if (spelling.empty()) return Error::usage("empty offload target; " + std::string(kAccepted));
  if (auto known = resolve_known(spelling)) return *known;
  if (spelling == kNvptxTriple || spelling == kAmdgcnTriple)
    return unknown(spelling, "a GPU triple needs an arch: write " + std::string(spelling) +
                                 (spelling == kNvptxTriple ? ":sm_90 or just sm_90"
                                                           : ":gfx90a or just gfx90a"));
  if (const size_t colon = spelling.find(':'); colon != std::string_view::npos)
    return resolve_triple_arch(spelling, colon);
  return unknown(spelling);
}

Result<void> override_targets(Manifest& manifest, const std::vector<std::string>& spellings) {
  std::vector<Target> targets;
  for (const auto& option : spellings) {
    for (const auto& spelling : util::split(option, ',')) {
      auto target = resolve_target(spelling);
      if (!target) return Error::usage("--target " + option + ": " + target.error().message);
      if (std::find(targets.begin(), targets.end(), *target) == targets.end())
        targets.push_back(*target);
    }
  }
  if (!targets.empty()) manifest.targets = std::move(targets);
  return {};
}

}  // namespace ob::manifest
