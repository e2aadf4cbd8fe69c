// Offload target spellings and --target overrides.
#include <catch2/catch.hpp>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/manifest/target.hpp"

using namespace ob;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

manifest::Target resolved(std::string_view spelling) {
  auto t = manifest::resolve_target(spelling);
  INFO("spelling: " << spelling);
  REQUIRE(t.ok());
  return *t;
}

std::string rejected(std::string_view spelling) {
  auto t = manifest::resolve_target(spelling);
  INFO("spelling: " << spelling);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().code == exit_code::usage);
  return t.error().message;
}

}  // namespace

TEST_CASE("target shorthands resolve to triple and arch", "[target]") {
  struct Row {
    const char* spelling;
    std::string_view triple;
    const char* arch;
    const char* short_name;
    manifest::TargetFamily family;
  };
  const Row table[] = {
      {"host", manifest::kHostTriple, "generic", "host", manifest::TargetFamily::HostDevice},
      {"x86_64", manifest::kHostTriple, "generic", "host", manifest::TargetFamily::HostDevice},
      {"x86_64-unknown-linux-gnu", manifest::kHostTriple, "generic", "host", manifest::TargetFamily::HostDevice},
      {"x86_64-unknown-linux-gnu:generic", manifest::kHostTriple, "generic", "host", manifest::TargetFamily::HostDevice},
      {"sm_90", manifest::kNvptxTriple, "sm_90", "sm_90", manifest::TargetFamily::Nvptx},
      {"sm_90a", manifest::kNvptxTriple, "sm_90a", "sm_90a", manifest::TargetFamily::Nvptx},
      {"sm_70", manifest::kNvptxTriple, "sm_70", "sm_70", manifest::TargetFamily::Nvptx},
      {"sm_100", manifest::kNvptxTriple, "sm_100", "sm_100", manifest::TargetFamily::Nvptx},
      {"nvptx64-nvidia-cuda:sm_80", manifest::kNvptxTriple, "sm_80", "sm_80", manifest::TargetFamily::Nvptx},
      {"gfx90a", manifest::kAmdgcnTriple, "gfx90a", "gfx90a", manifest::TargetFamily::Amdgcn},
      {"gfx942", manifest::kAmdgcnTriple, "gfx942", "gfx942", manifest::TargetFamily::Amdgcn},
      {"gfx1030", manifest::kAmdgcnTriple, "gfx1030", "gfx1030", manifest::TargetFamily::Amdgcn},
      {"gfx1100", manifest::kAmdgcnTriple, "gfx1100", "gfx1100", manifest::TargetFamily::Amdgcn},
      {"amdgcn-amd-amdhsa:gfx90a", manifest::kAmdgcnTriple, "gfx90a", "gfx90a", manifest::TargetFamily::Amdgcn},
  };
  for (const auto& row : table) {
    INFO("spelling: " << row.spelling);
    const manifest::Target t = resolved(row.spelling);
    CHECK(t.triple == row.triple);
    CHECK(t.arch == row.arch);
    CHECK(t.short_name() == row.short_name);
    CHECK(t.family() == row.family);
    CHECK(t.is_gpu() == (row.family != manifest::TargetFamily::HostDevice));
    // The short name is itself a spelling that resolves to the same target.
    CHECK(resolved(t.short_name()) == t);
  }
}

TEST_CASE("malformed targets are rejected with the accepted forms", "[target]") {
  for (const char* bad : {"", "sm_", "sm_9", "sm_9x", "sm_90ab", "gfx", "gfx90", "gfxabc", "GFX90A",
                          "cuda", "nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda:gfx90a",
                          "amdgcn-amd-amdhsa:sm_90", "x86_64-unknown-linux-gnu:sm_90",
                          "riscv64-unknown-linux-gnu:generic", "host:generic", "sm_90 "}) {
    const std::string msg = rejected(bad);
    CHECK_THAT(msg, Contains("accepted: host, x86_64, sm_NN"));
    CHECK_THAT(msg, Contains("TRIPLE:ARCH"));
  }
}

TEST_CASE("unknown targets get a did-you-mean hint", "[target]") {
  const std::pair<const char*, const char*> near_misses[] = {
      {"sm90", "sm_90"},   {"sm-80", "sm_80"},  {"SM_90", "sm_90"},     {"hots", "host"},
      {"gfx90", "gfx90a"}, {"gfx_942", "gfx942"}, {"x86-64", "x86_64"}, {"gfx-1030", "gfx1030"},
      {"nvptx-nvidia-cuda:sm90", "nvptx64-nvidia-cuda:sm_90"},
      {"x86_64-unknown-linux-gnu:host", "x86_64-unknown-linux-gnu:generic"},
  };
  for (const auto& [typo, fix] : near_misses) {
    INFO("typo: " << typo);
    const std::string msg = rejected(typo);
    CHECK_THAT(msg, StartsWith("unknown offload target \"" + std::string(typo) + "\""));
    CHECK_THAT(msg, Contains("did you mean \"" + std::string(fix) + "\"?"));
  }
  CHECK_THAT(rejected("nvptx64-nvidia-cuda"), Contains("a GPU triple needs an arch"));
  CHECK_FALSE(rejected("completely-wrong").find("did you mean") != std::string::npos);
}

TEST_CASE("override_targets replaces, splits on commas and deduplicates", "[target]") {
  manifest::Manifest m;
  m.targets = {resolved("host")};

  REQUIRE(manifest::override_targets(m, {"sm_90,gfx90a", "sm_90", "nvptx64-nvidia-cuda:sm_90", "x86_64"}).ok());
  REQUIRE(m.targets.size() == 3);
  CHECK(m.targets[0].short_name() == "sm_90");
  CHECK(m.targets[1].short_name() == "gfx90a");
  CHECK(m.targets[2].short_name() == "host");

  SECTION("an empty list changes nothing") {
    REQUIRE(manifest::override_targets(m, {}).ok());
    CHECK(m.targets.size() == 3);
  }
  SECTION("errors name the option and keep the old targets") {
    auto r = manifest::override_targets(m, {"host", "sm9"});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == exit_code::usage);
    CHECK_THAT(r.error().message, StartsWith("--target sm9: unknown offload target \"sm9\"; "
                                             "did you mean \"sm_90\"?"));
    CHECK(m.targets.size() == 3);
  }
  SECTION("an empty piece is an error") {
    auto r = manifest::override_targets(m, {"sm_90,"});
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, StartsWith("--target sm_90,: empty offload target"));
  }
}
