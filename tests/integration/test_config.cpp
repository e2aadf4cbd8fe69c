// `offload-build config` and the one precedence: each source in turn, from
// the default up to the command line, seen by `config` with its origin and
// used by a real build; config files with bad lines; get/set/unset; secrets.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

struct ConfigProject {
  TempDir tmp{"ob-config"};
  fs::path dir = copy_example("saxpy-c", tmp.path());
  fs::path user = tmp.path() / "xdg";
  fs::path system = tmp.path() / "system.conf";
  Env env() const {
    return {{"XDG_CONFIG_HOME", user.string()},
            {"OFFLOAD_BUILD_SYSTEM_CONFIG", system.string()},
            {"OFFLOAD_BUILD_CACHE_DIR", std::nullopt},
            {"OFFLOAD_BUILD_BASE_DIR", std::nullopt}};
  }
  fs::path user_file() const { return user / "offload-build" / "config"; }
  void write(const fs::path& file, const std::string& text) const {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  // The setting's row of `config --json`.
  nlohmann::json row(const std::string& key, std::vector<std::string> args = {}, Env extra = {}) const {
    args.insert(args.begin(), {"-C", dir.string()});
    args.insert(args.end(), {"config", "--json"});
    Env e = env();
    e.insert(e.end(), extra.begin(), extra.end());
    auto r = run_ob(args, {}, e);
    REQUIRE(r.exit_code == 0);
    const auto all = nlohmann::json::parse(r.out);
    for (const auto& s : all["settings"])
      if (s["key"] == key) return s;
    FAIL("no row " << key);
    return {};
  }
};

}  // namespace

TEST_CASE("config shows each setting's origin: default, system file, user file, manifest, environment, command line", "[config]") {
  ConfigProject p;
  const fs::path d1 = p.tmp.path() / "c-system", d2 = p.tmp.path() / "c-user",
                 d3 = p.tmp.path() / "c-manifest", d4 = p.tmp.path() / "c-env", d5 = p.tmp.path() / "c-cli";
  auto r = p.row("cache_dir");
  CHECK(r["origin"] == "default");

  p.write(p.system, "# the machine's\ncache_dir = " + d1.string() + "\n");
  r = p.row("cache_dir");
  CHECK(r["origin"] == "system config");
  CHECK(r["value"] == d1.string());
  CHECK(r["where"] == p.system.string() + ":2");

  p.write(p.user_file(), "cache_dir = " + d2.string() + "\n");
  r = p.row("cache_dir");
  CHECK(r["origin"] == "user config");
  CHECK(r["value"] == d2.string());

  // The manifest: its line and column.
  std::string manifest;
  {
    std::ifstream in(p.dir / "offload.json");
    manifest.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t brace = manifest.find('{');
  manifest.insert(brace + 1, "\n  \"cache_dir\": \"" + d3.string() + "\",");
  p.write(p.dir / "offload.json", manifest);
  r = p.row("cache_dir");
  CHECK(r["origin"] == "manifest");
  CHECK(r["value"] == d3.string());
  CHECK_THAT(r["where"].get<std::string>(), Catch::EndsWith("offload.json:2:16"));

  r = p.row("cache_dir", {}, {{"OFFLOAD_BUILD_CACHE_DIR", d4.string()}});
  CHECK(r["origin"] == "environment");
  CHECK(r["where"] == "OFFLOAD_BUILD_CACHE_DIR");

  r = p.row("cache_dir", {"--cache-dir", d5.string()}, {{"OFFLOAD_BUILD_CACHE_DIR", d4.string()}});
  CHECK(r["origin"] == "command line");
  CHECK(r["value"] == d5.string());

  // A real build uses the one in force: the environment over the manifest.
  auto b = run_ob({"-C", p.dir.string(), "build"}, {}, [&] {
    Env e = p.env();
    e.emplace_back("OFFLOAD_BUILD_CACHE_DIR", d4.string());
    return e;
  }());
  REQUIRE(b.exit_code == 0);
  CHECK(fs::exists(d4 / "stats.json"));
  CHECK_FALSE(fs::exists(d3));
  // And without it, the manifest's (above both config files).
  fs::remove_all(p.dir / "build");
  REQUIRE(run_ob({"-C", p.dir.string(), "build"}, {}, p.env()).exit_code == 0);
  CHECK(fs::exists(d3 / "stats.json"));
  CHECK_FALSE(fs::exists(d1));
  CHECK_FALSE(fs::exists(d2));
}

TEST_CASE("a user config file's settings reach a build and a launcher compile", "[config]") {
  ConfigProject p;
  const fs::path cache = p.tmp.path() / "from-file";
  p.write(p.user_file(), "cache_dir = " + cache.string() + "\nexplain = true\n");
  auto b = run_ob({"-C", p.dir.string(), "build"}, {}, p.env());
  REQUIRE(b.exit_code == 0);
  CHECK(fs::exists(cache / "stats.json"));
  CHECK_THAT(b.out + b.err, Catch::Contains("miss"));  // explain = true
  // Launcher mode reads the same file.
  std::ofstream(p.tmp.path() / "plain.c") << "int plain(void) { return 1; }\n";
  auto l = run_ob({"wrap", "--", "clang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", "plain.c", "-o", "plain.o"},
                  p.tmp.path(), p.env());
  INFO(l.err);
  CHECK(l.exit_code == 0);
  auto stats = run_ob({"cache", "stats", "--json"}, {}, p.env());
  REQUIRE(stats.exit_code == 0);
  CHECK(nlohmann::json::parse(stats.out)["dir"] == cache.string());
}

TEST_CASE("a bad config file is an error naming its file and line, for a build and a launcher compile", "[config]") {
  ConfigProject p;
  p.write(p.user_file(), "# ok\nmax_size = 2G\ncache_dri = /tmp/x\n");
  auto b = run_ob({"-C", p.dir.string(), "build"}, {}, p.env());
  CHECK(b.exit_code == 2);
  CHECK_THAT(b.err, Catch::Contains(p.user_file().string() + ":3: unknown setting 'cache_dri'"));
  CHECK_THAT(b.err, Catch::Contains("did you mean 'cache_dir'?"));
  p.write(p.user_file(), "jobs = many\n");
  auto l = run_ob({"wrap", "--", "clang-22", "-c", "x.c"}, p.tmp.path(), p.env());
  CHECK(l.exit_code == 2);
  CHECK_THAT(l.err, Catch::Contains(":1: jobs is a whole number of at least 1, not 'many'"));
  p.write(p.user_file(), "no equals sign\n");
  b = run_ob({"-C", p.dir.string(), "build"}, {}, p.env());
  CHECK(b.exit_code == 2);
  CHECK_THAT(b.err, Catch::Contains(":1: 'no equals sign' is not a setting: write `key = value`"));
  // A bad environment variable names the variable.
  fs::remove(p.user_file());
  Env e = p.env();
  e.emplace_back("OFFLOAD_BUILD_MAX_SIZE", "lots");
  b = run_ob({"-C", p.dir.string(), "build"}, {}, e);
  CHECK(b.exit_code == 2);
  CHECK_THAT(b.err, Catch::Contains("OFFLOAD_BUILD_MAX_SIZE: max_size: invalid size 'lots'"));
}

TEST_CASE("config get, set and unset keep the user file's other lines", "[config]") {
  ConfigProject p;
  p.write(p.user_file(), "# my settings\nmax_size = 1G\n\nverbose = false\n");
  auto s = run_ob({"config", "set", "max_size", "3G"}, {}, p.env());
  REQUIRE(s.exit_code == 0);
  auto g = run_ob({"config", "get", "max_size"}, {}, p.env());
  CHECK(g.out == "3G\n");
  REQUIRE(run_ob({"config", "set", "base_dir", "/srv"}, {}, p.env()).exit_code == 0);
  REQUIRE(run_ob({"config", "unset", "verbose"}, {}, p.env()).exit_code == 0);
  std::ifstream in(p.user_file());
  const std::string text(std::istreambuf_iterator<char>(in), {});
  CHECK(text == "# my settings\nmax_size = 3G\n\nbase_dir = /srv\n");
  CHECK(run_ob({"config", "get", "kernel_namespace"}, {}, p.env()).exit_code == 1);  // unset
  auto bad = run_ob({"config", "set", "max_size", "huge"}, {}, p.env());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("invalid size 'huge'"));
  auto typo = run_ob({"config", "get", "bse_dir"}, {}, p.env());
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("did you mean 'base_dir'?"));
  // A higher source still wins, and config set says so.
  Env e = p.env();
  e.emplace_back("OFFLOAD_BUILD_MAX_SIZE", "1G");
  auto over = run_ob({"config", "set", "max_size", "4G"}, {}, e);
  CHECK_THAT(over.out, Catch::Contains("OFFLOAD_BUILD_MAX_SIZE"));
}

TEST_CASE("config never shows a secret: the signing key hidden, remote passwords redacted", "[config]") {
  ConfigProject p;
  Env e = p.env();
  e.emplace_back("OFFLOAD_BUILD_SIGNING_KEY", "topsecret-key");
  e.emplace_back("OFFLOAD_BUILD_REMOTE_STORAGE", "redis://:hunter2@127.0.0.1:1");
  auto r = run_ob({"config"}, {}, e);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, !Catch::Contains("topsecret-key"));
  CHECK_THAT(r.out, !Catch::Contains("hunter2"));
  CHECK_THAT(r.out, Catch::Contains("(set; hidden)"));
  auto j = run_ob({"config", "--json"}, {}, e);
  CHECK_THAT(j.out, !Catch::Contains("topsecret-key"));
  CHECK_THAT(j.out, !Catch::Contains("hunter2"));
  auto g = run_ob({"config", "get", "signing_key"}, {}, e);
  CHECK_THAT(g.out, !Catch::Contains("topsecret-key"));
  auto set = run_ob({"config", "set", "signing_key", "abc"}, {}, p.env());
  CHECK(set.exit_code == 2);
  CHECK_THAT(set.err, Catch::Contains("secret"));
  CHECK_FALSE(fs::exists(p.user_file()));
}

TEST_CASE("help: each option's line comes from the settings table", "[config]") {
  auto help = run_ob({"--help"});
  REQUIRE(help.exit_code == 0);
  auto table = run_ob({"config", "--json"});
  REQUIRE(table.exit_code == 0);
  size_t with_option = 0;
  const auto all = nlohmann::json::parse(table.out);
  for (const auto& s : all["settings"]) {
    if (!s.contains("option")) continue;
    ++with_option;
    INFO(s["key"]);
    CHECK_THAT(help.out, Catch::Contains(s["option"].get<std::string>()));
    CHECK_THAT(help.out, Catch::Contains("[setting " + s["key"].get<std::string>()));
  }
  CHECK(with_option >= 12);
}

namespace {

// `config` and a build refuse `file`: exit 2, the path, why and what to do;
// its prefix_command never runs.
void refused(const ConfigProject& p, const fs::path& file, const std::string& why) {
  for (std::vector<std::string> args : {std::vector<std::string>{"config"}, {"build"}}) {
    args.insert(args.begin(), {"-C", p.dir.string()});
    auto r = run_ob(args, {}, p.env());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("config file " + file.string() + ": not used: ") &&
                          Catch::Contains(why) && Catch::Contains("chmod go-w"));
    CHECK_FALSE(fs::exists(p.tmp / "ran"));
  }
}

// A prefix_command that leaves a trace: a config file that sets it must not
// be used unless trusted.
std::string hostile_settings(const ConfigProject& p) {
  return "prefix_command = /usr/bin/touch " + (p.tmp / "ran").string() + "\n";
}

}  // namespace

TEST_CASE("a config file another user may write is refused, with the path and the reason", "[config][trust]") {
  ConfigProject p;
  SECTION("a world-writable user config file") {
    p.write(p.user_file(), hostile_settings(p));
    fs::permissions(p.user_file(), fs::perms(0666));
    refused(p, p.user_file(), "it is writable by every user");
    fs::permissions(p.user_file(), fs::perms(0644));  // once fixed, used again
    auto ok = run_ob({"-C", p.dir.string(), "config", "get", "prefix_command"}, {}, p.env());
    CHECK(ok.exit_code == 0);
  }
  SECTION("a system config file in a directory every user may write") {
    const fs::path dir = p.tmp / "etc";
    p.write(dir / "offload-build.conf", hostile_settings(p));
    fs::permissions(dir, fs::perms(0777));
    p.system = dir / "offload-build.conf";
    refused(p, p.system, "its directory " + dir.string() + " is writable by every user");
    // Sticky, as /tmp: others cannot replace our file there.
    fs::permissions(dir, fs::perms(01777));
    auto ok = run_ob({"-C", p.dir.string(), "config"}, {}, p.env());
    INFO(ok.err);
    CHECK(ok.exit_code == 0);
  }
}

TEST_CASE("a config file of another user, or writable by a group not ours, is refused", "[config][trust]") {
  if (geteuid() != 0) OB_SKIP("needs root to make files of another user");
  ConfigProject p;
  p.write(p.user_file(), hostile_settings(p));
  SECTION("owned by another user") {
    REQUIRE(::chown(p.user_file().c_str(), 65534, 65534) == 0);
    refused(p, p.user_file(), "it belongs to another user (uid 65534)");
  }
  SECTION("writable by a group we are not in") {
    REQUIRE(::chown(p.user_file().c_str(), 0, 65534) == 0);
    fs::permissions(p.user_file(), fs::perms(0664));
    refused(p, p.user_file(), "it is writable by group 65534, which is not one of ours");
    // Our own group may write it: trusted, as a group-shared cache is.
    REQUIRE(::chown(p.user_file().c_str(), 0, getegid()) == 0);
    auto ok = run_ob({"-C", p.dir.string(), "config", "get", "prefix_command"}, {}, p.env());
    CHECK(ok.exit_code == 0);
  }
}

TEST_CASE("the command line's --color auto overrides OFFLOAD_BUILD_COLOR", "[config]") {
  // The command line is above the environment for every setting, its default
  // value included: `--color auto` is given, not absent.
  ConfigProject p;
  Env e = p.env();
  e.emplace_back("OFFLOAD_BUILD_COLOR", "always");
  e.emplace_back("NO_COLOR", std::nullopt);
  e.emplace_back("CLICOLOR_FORCE", std::nullopt);
  const auto row = p.row("color", {"--color", "auto"}, {{"OFFLOAD_BUILD_COLOR", "always"}});
  CHECK(row["value"] == "auto");
  CHECK(row["origin"] == "command line");
  // What it does: an error to a pipe is painted under the variable alone, not
  // with `--color auto` (auto: a pipe is no terminal).
  const fs::path empty = p.tmp.path() / "empty";
  fs::create_directories(empty);
  auto painted = run_ob({"-C", empty.string(), "build"}, {}, e);
  CHECK(painted.exit_code != 0);
  CHECK_THAT(painted.err, Catch::Contains("\x1b["));
  auto plain = run_ob({"-C", empty.string(), "--color", "auto", "build"}, {}, e);
  CHECK(plain.exit_code == painted.exit_code);
  CHECK_THAT(plain.err, Catch::Contains("error:"));
  CHECK_THAT(plain.err, !Catch::Contains("\x1b["));
}

TEST_CASE("the cache umask is checked by one rule: 1777 is refused where it is read", "[config]") {
  ConfigProject p;
  Env e = p.env();
  e.emplace_back("OFFLOAD_BUILD_CACHE_UMASK", "1777");
  auto r = run_ob({"-C", p.dir.string(), "config", "get", "cache_umask"}, {}, e);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("OFFLOAD_BUILD_CACHE_UMASK: cache_umask is an octal umask such as 002, not '1777'"));
  e.back().second = "0027";
  r = run_ob({"-C", p.dir.string(), "config", "get", "cache_umask"}, {}, e);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0027\n");
}

TEST_CASE("a setting's option takes the table's value check, name and group", "[config]") {
  auto bad = run_ob({"-j", "0", "build"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("jobs is a whole number of at least 1, not '0'"));
  bad = run_ob({"--color", "sometimes", "build"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("color is one of auto, always, never, not 'sometimes'"));
  auto help = run_ob({"--help"});
  REQUIRE(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("-j,--jobs N"));
  CHECK_THAT(help.out, Catch::Contains("--color WHEN"));
}

TEST_CASE("OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR is a flag of the table: false is false", "[config]") {
  ConfigProject p;
  const fs::path cache = p.tmp.path() / "cache";
  auto compile = [&](const std::string& hook) {
    Env e = p.env();
    e.emplace_back("OFFLOAD_BUILD_CACHE_DIR", cache.string());
    e.emplace_back("OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR", hook);
    return run_ob({"-v", "wrap", "--", "clang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2",
                   "-c", "saxpy.c", "-o", "got-" + hook + ".o"},
                  p.dir, e);
  };
  auto off = compile("false");
  INFO(off.err);
  REQUIRE(off.exit_code == 0);
  CHECK_THAT(off.err, !Catch::Contains("internal error"));
  CHECK_THAT(off.err, Catch::Contains("offload-build: splitting"));
  auto on = compile("yes");
  REQUIRE(on.exit_code == 0);
  CHECK_THAT(on.err, Catch::Contains("internal error: OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR is set"));
  auto bad = compile("maybe");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("OFFLOAD_BUILD_TEST_HOOK_INTERNAL_ERROR: test_hook_internal_error is true or false"));
}
