// Lookups that found nothing (cache/lookups.hpp): the preload library's
// record read strictly, turned into dependencies (exact paths, system
// directories by stamp), and checked by a hit and by the up-to-date check.
#include <catch2/catch.hpp>

#include <fstream>

#include "offload_build/cache/build_state.hpp"
#include "offload_build/cache/lookups.hpp"
#include "offload_build/toolchain/stable_names.h"
#include "offload_build/toolchain/stable_names.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::cache;
using ob::test::TempDir;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::trunc) << text;
}

plan::Plan plan_in(const fs::path& dir) {
  plan::Plan plan;
  plan.cwd = dir;
  plan.build_dir = dir / "build";
  plan.base_dirs = {dir};
  plan.name_anchor = dir;
  plan::Job job;
  job.kind = plan::JobKind::HostCompile;
  job.inode_sensitive = true;
  job.stable_names = true;
  job.depfile = dir / "build/k.d";
  plan.add(std::move(job));
  return plan;
}

}  // namespace

// The settings table's default for system_dirs.
constexpr std::string_view kSystemDirs = "/usr:/lib:/lib32:/lib64:/libx32";

TEST_CASE("a lookups record is read strictly", "[lookups]") {
  TempDir tmp("ob-lookups");
  const fs::path f = tmp / "k.d.lookups";
  std::string why;
  CHECK_FALSE(toolchain::read_lookups_record(f, why));  // no record: the library was not loaded
  CHECK_THAT(why, Catch::Contains("preload library"));

  write(f, "/x/a.h\n");
  CHECK_FALSE(toolchain::read_lookups_record(f, why));  // no header

  write(f, OB_LOOKUPS_HEADER "\n/x/b.h\n" OB_LOOKUPS_HEADER "\n/x/a.h\n/x/b.h\n");
  CHECK_FALSE(toolchain::read_lookups_record(f, why));  // nobody with the library wrote the depfile
  CHECK_THAT(why, Catch::Contains("wrote the depfile"));

  write(f, OB_LOOKUPS_HEADER "\n/x/b.h\n" OB_LOOKUPS_HEADER "\n/x/a.h\n" OB_LOOKUPS_WROTE "\n/x/b.h\n");
  auto paths = toolchain::read_lookups_record(f, why);
  REQUIRE(paths);
  CHECK(*paths == std::vector<std::string>{"/x/a.h", "/x/b.h"});  // once each, sorted

  write(f, OB_LOOKUPS_HEADER "\n" OB_LOOKUPS_WROTE "\n/x/a.h\n" OB_LOOKUPS_LOST "\n");
  CHECK_FALSE(toolchain::read_lookups_record(f, why));
  CHECK_THAT(why, Catch::Contains("could not all be recorded"));
  write(f, OB_LOOKUPS_HEADER "\n" OB_LOOKUPS_WROTE "\nrelative.h\n");
  CHECK_FALSE(toolchain::read_lookups_record(f, why));
}

TEST_CASE("lookups that found nothing become dependencies a new file breaks", "[lookups]") {
  TempDir tmp("ob-lookups");
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "a");
  const plan::Plan plan = plan_in(dir);
  const plan::Job& job = plan.jobs.front();
  std::string why;
  const std::vector<std::string> paths = {
      (dir / "a/h.h").string(),           // an -I directory without the header
      (dir / "a/bits").string(),          // a directory that is not there...
      (dir / "a/bits/types.h").string(),  // ...so nothing under it is
      (dir / "./b/../a/opt.h").string(),  // written as the compiler spelt it
      (dir / "build/k.o.tmp").string(),   // the plan's products: not kept
      "/proc/self/nothing",               // the kernel's: not kept
      "/usr/include/ob-no-such-header.h",  // a system directory: by its stamp
      "/usr/include/ob-no-such-dir/x.h",
  };
  auto deps = lookup_deps(plan, job, system_dirs(kSystemDirs), paths, why);
  INFO(why);
  REQUIRE(deps);
  std::vector<std::string> kept;
  for (const auto& d : *deps) kept.push_back(d.path + " " + d.sha256.substr(0, 16));
  CHECK(kept == std::vector<std::string>{"/usr/include directory mtime=", "a/bits absent", "a/h.h absent",
                                         "a/opt.h absent"});

  FileFactsCache files({dir}, system_dirs(kSystemDirs), {});
  for (const auto& d : *deps) CHECK(dep_holds(d, files, dir));
  write(dir / "a/h.h", "#define V 20\n");
  FileFactsCache later({dir}, system_dirs(kSystemDirs), {});
  const Dep& h = (*deps)[2];
  CHECK_FALSE(dep_holds(h, later, dir));
  CHECK(dep_change(h, later, dir) == "file appeared: a/h.h (looked for and not found when it last ran)");
  CHECK(dep_holds((*deps)[1], later, dir));

  // A path that exists once the job ended may or may not have been seen: not kept.
  CHECK_FALSE(lookup_deps(plan, job, system_dirs(kSystemDirs), {(dir / "a/h.h").string()}, why));
  CHECK_THAT(why, Catch::Contains("appeared while the job ran"));

  // Too many to check on every hit: not kept.
  std::vector<std::string> many;
  for (size_t i = 0; i <= kMaxLookupDeps; ++i) many.push_back((dir / ("m" + std::to_string(i) + ".h")).string());
  CHECK_FALSE(lookup_deps(plan, job, system_dirs(kSystemDirs), many, why));
}

TEST_CASE("a job is not up to date once a file appears where it found nothing", "[lookups]") {
  TempDir tmp("ob-lookups");
  const fs::path dir = tmp.path();
  write(dir / "k.c", "int k;\n");
  write(dir / "build/k.o", "object");
  const fs::path state_file = dir / "build/state.json";
  JobKey key;
  key.argv = {"<tool0>", "-c", "k.c"};
  {
    BuildState state(state_file);
    FileFactsCache files({dir}, system_dirs(kSystemDirs), {});
    JobRecord r{{}, key.argv, {}, {}, {}, {}};
    r.deps = {Dep{"k.c", files.get("k.c", dir).sha256, 0, 0, {}},
              Dep{"a/h.h", std::string(kAbsent), 0, 0, {}}};
    for (const auto& d : r.deps) r.dep_stamps.push_back(dep_stamp(d, files, dir));
    r.outputs = {{(dir / "build/k.o").string(), stat_stamp(dir / "build/k.o")}};
    state.record("host k.c", std::move(r));
    state.save();
  }
  {
    BuildState state(state_file);
    FileFactsCache files({dir}, system_dirs(kSystemDirs), {});
    CHECK(state.up_to_date("host k.c", key, files, dir));
  }
  write(dir / "a/h.h", "#define V 20\n");
  BuildState state(state_file);
  FileFactsCache files({dir}, system_dirs(kSystemDirs), {});
  CHECK_FALSE(state.up_to_date("host k.c", key, files, dir));
  plan::Job job;
  job.kind = plan::JobKind::HostCompile;
  job.source = dir / "k.c";
  CHECK_THAT(state.explain_miss("host k.c", job, key, files, dir), Catch::Contains("file appeared: a/h.h"));
}
