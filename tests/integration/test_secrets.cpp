// No password in clear (issue #29.4): remote storage URLs whose password or
// token holds a '|', '/', '?', '#' or a space, given by each source (the
// environment, a config file, the command line), through every path that
// prints a remote URL: config, config get, config --json, doctor, the build's
// error, -v, --report, --trace, cache stats, and the environment of the
// programs offload-build starts. "S3cret" must appear in none of them.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <functional>

#include "integration/launcher_support.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::vector<std::string> kNasty = {
    "redis://:S3cret|pw@127.0.0.1:1",   "redis://:S3cret/pw@127.0.0.1:1",
    "redis://:S3cret?pw@127.0.0.1:1",   "http://user:S3cret/pw@127.0.0.1:1/x",
    "http://user:S3cret#pw@127.0.0.1:1/x", "http://127.0.0.1:1/x|bearer-token=S3cret pw",
    "http://127.0.0.1:1/x|bearer-token=S3cret|pw"};

struct SecretsProject {
  TempDir tmp{"ob-secrets"};
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path user = tmp / "xdg";
  fs::path cache = tmp / "cache";
  Env env(Env more = {}) const {
    Env e{{"XDG_CONFIG_HOME", user.string()},
          {"OFFLOAD_BUILD_SYSTEM_CONFIG", (tmp / "system.conf").string()},
          {"OFFLOAD_BUILD_CACHE_DIR", cache.string()},
          {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
          {"OFFLOAD_BUILD_PREFIX_COMMAND", std::nullopt},
          {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
          {"MAKEFLAGS", std::nullopt}};
    e.insert(e.end(), more.begin(), more.end());
    return e;
  }
  fs::path user_file() const { return user / "offload-build" / "config"; }
  process::Captured ob(std::vector<std::string> args, Env more = {}) const {
    args.insert(args.begin(), {"-C", dir.string()});
    return run_ob(std::move(args), dir, env(std::move(more)));
  }
};

// What a run printed and wrote, checked for the secret.
void no_secret(const std::string& what, const std::string& text) {
  INFO(what << ":\n" << text);
  CHECK(text.find("S3cret") == std::string::npos);
}

}  // namespace

TEST_CASE("a remote password or token is never printed, whatever it holds", "[config][remote][secrets]") {
  SecretsProject p;
  for (const auto& url : kNasty) {
    INFO("URL: " << url);
    // The environment and a config file; the manifest's remote_storage is
    // checked where it is written (test_manifest), the command line below.
    const Env from_env{{"OFFLOAD_BUILD_REMOTE_STORAGE", url}};
    fs::create_directories(p.user_file().parent_path());
    std::ofstream(p.user_file()) << "remote_storage = " << url << "\n";
    for (const Env& e : {from_env, Env{}}) {
      auto list = p.ob({"config"}, e);
      CHECK(list.exit_code == 0);
      no_secret("config", list.out + list.err);
      CHECK_THAT(list.out, Catch::Contains("(unparsable; hidden)"));
      auto json = p.ob({"config", "--json"}, e);
      CHECK(json.exit_code == 0);
      no_secret("config --json", json.out + json.err);
      auto get = p.ob({"config", "get", "remote_storage"}, e);
      CHECK(get.exit_code == 0);
      no_secret("config get", get.out + get.err);
      CHECK_THAT(get.out, Catch::Contains("(unparsable; hidden)"));
      auto doctor = p.ob({"doctor"}, e);
      no_secret("doctor", doctor.out + doctor.err);
      CHECK_THAT(doctor.out, Catch::Contains("(unparsable; hidden)"));
      // The build refuses the URL (exit 2), with the reason, before any job.
      const fs::path report = p.tmp / "report.json";
      auto build = p.ob({"-v", "--report", report.string(), "build"}, e);
      CHECK(build.exit_code == 2);
      no_secret("build -v --report", build.out + build.err);
      CHECK_THAT(build.err, Catch::Contains("(unparsable; hidden)"));
      if (fs::exists(report)) no_secret("--report", read_file(report));
    }
    fs::remove(p.user_file());
    auto cli = p.ob({"--remote-storage", url, "build"});
    CHECK(cli.exit_code == 2);
    no_secret("--remote-storage", cli.out + cli.err);
    // config set refuses it, saying why, and writes nothing.
    auto set = p.ob({"config", "set", "remote_storage", url});
    CHECK(set.exit_code == 2);
    no_secret("config set", set.out + set.err);
    CHECK_THAT(set.err, Catch::Contains("remote_storage") && Catch::Contains("(unparsable; hidden)"));
    CHECK_FALSE(fs::exists(p.user_file()));
  }
}

TEST_CASE("the programs offload-build starts never see a remote credential", "[launcher][remote][secrets]") {
  SecretsProject p;
  // prefix_command runs this before a plain compile: it writes its environment.
  const fs::path dump = p.tmp / "env-dump.sh", seen = p.tmp / "env.txt";
  write_file(dump, "#!/bin/sh\nenv > '" + seen.string() + "'\nexec \"$@\"\n");
  fs::permissions(dump, fs::perms::owner_all);
  std::vector<std::string> urls = kNasty;
  urls.push_back("redis://:S3cret@127.0.0.1:1");  // parses: written out in the variable
  for (const auto& url : urls) {
    INFO("URL: " << url);
    fs::remove(seen);
    // Another source each time: a plain compile is cached, and a hit runs nothing.
    write_file(p.tmp / "plain.c", "int plain(void) { return " + std::to_string(url.size()) + "; }\n// " +
                                      std::to_string(std::hash<std::string>{}(url)) + "\n");
    auto r = run_ob({"--prefix-command", dump.string(), "wrap", "--", "/usr/bin/clang-22", "-c", "plain.c", "-o",
                     "plain.o"},
                    p.tmp.path(), p.env({{"OFFLOAD_BUILD_REMOTE_STORAGE", url}}));
    CHECK(r.exit_code == 0);
    no_secret("launcher", r.out + r.err);
    REQUIRE(fs::exists(seen));
    const std::string env = read_file(seen);
    no_secret("the child's environment", env);
    CHECK(env.find("OFFLOAD_BUILD_REMOTE_STORAGE=") == std::string::npos);
  }
}

TEST_CASE("a remote with a password: -v, the warning, --report, --trace and cache stats show ***",
          "[integration][remote][secrets]") {
  SecretsProject p;
  const fs::path report = p.tmp / "report.json", trace = p.tmp / "trace.json";
  // Nothing listens on port 1: the remote fails with one warning, the build goes on.
  const std::string url = "redis://:S3cret%2Fpw@127.0.0.1:1|connect-timeout=200ms";
  auto r = p.ob({"-v", "--report", report.string(), "--trace", trace.string(), "build"},
                {{"OFFLOAD_BUILD_REMOTE_STORAGE", url}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("remote storage redis://:***@127.0.0.1:1"));
  no_secret("build -v", r.out + r.err);
  REQUIRE(fs::exists(report));
  no_secret("--report", read_file(report));
  if (fs::exists(trace)) no_secret("--trace", read_file(trace));
  auto stats = p.ob({"cache", "stats", "--json"});
  REQUIRE(stats.exit_code == 0);
  CHECK_THAT(stats.out, Catch::Contains("redis://:***@127.0.0.1:1"));
  no_secret("cache stats", stats.out + stats.err);
  for (const auto& e : fs::recursive_directory_iterator(p.cache))
    if (e.is_regular_file() && e.path().filename() == "stats.json") no_secret("stats.json", read_file(e.path()));
  auto doctor = p.ob({"doctor"}, {{"OFFLOAD_BUILD_REMOTE_STORAGE", url}});
  no_secret("doctor", doctor.out + doctor.err);
  CHECK_THAT(doctor.out, Catch::Contains("redis://:***@127.0.0.1:1"));
}
