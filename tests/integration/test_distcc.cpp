// prefix_command with distcc (docs/DISTRIBUTED.md): two private distccd, on
// 127.0.0.1 and 127.0.0.2, started and stopped here; the client is sent to
// 127.0.0.2 only. A make project of plain and offload sources built through
// the launcher gives the right program, the plain sources are compiled on
// 127.0.0.2 and no offload compile is sent, with prefix_command, with distcc
// in the compiler position and with a masquerade link on PATH. Without offload-build, distcc
// compiles an offload source into an object with no device image, exit 0.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "integration/launcher_support.hpp"
#include "support/other_user.hpp"
#include "support/servers.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const fs::path kDistcc = "/usr/bin/distcc";
const fs::path kDistccd = "/usr/bin/distccd";

bool can_connect(const std::string& address, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

// distccd on `address` (a loopback address) and a free port, its log (stderr)
// in `dir`; at most 10 minutes (timeout), stopped by PID when it goes (the
// daemon stops its workers). Run as root, it serves as user distccd, which
// may not reach the checkout (a 0700 clone, issue #32): it starts in `dir`
// (0755) with HOME there and a PATH of system directories only.
struct Distccd {
  std::string address;
  int port = free_port();
  fs::path log;
  ServerProcess process;
  Distccd(const fs::path& dir, std::string addr) : address(std::move(addr)), log(dir / "distccd.log") {
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms(0755));
    process = ServerProcess({"/usr/bin/env", "-C", dir.string(), "PATH=/usr/bin:/bin", "HOME=" + dir.string(),
                             "TMPDIR=/tmp", "/usr/bin/timeout", "600", kDistccd.string(), "--daemon", "--no-detach",
                             "--listen", address, "--port", std::to_string(port), "--allow", "127.0.0.1",
                             "--allow", "127.0.0.2", "--jobs", "2", "--log-stderr", "--log-level=info"},
                            log);
    if (!wait_until([&] { return can_connect(address, port); }, process))
      throw std::runtime_error("distccd did not start on " + address + "; see " + log.string());
  }
  std::string host() const { return address + ":" + std::to_string(port); }
};

const char* kMain = R"(#include <stdio.h>
int saxpy_on_device(int n, float a, const float *x, float *y);
int sum_on_device(int n, const float *y);
void fill(int n, float *x, float v);
int main(void) {
  float x[1000], y[1000];
  fill(1000, x, 1.0f);
  fill(1000, y, 2.0f);
  int offloaded = saxpy_on_device(1000, 3.0f, x, y);
  printf("offloaded=%d sum=%d\n", offloaded, sum_on_device(1000, y));
  return 0;
}
)";
const char* kUtil = "void fill(int n, float *x, float v) { for (int i = 0; i < n; ++i) x[i] = v; }\n";
const char* kSaxpy = R"(#include <omp.h>
int saxpy_on_device(int n, float a, const float *x, float *y) {
  int on_device = 0;
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n], on_device)
  for (int i = 0; i < n; ++i) {
    y[i] = a * x[i] + y[i];
    if (i == 0) on_device = !omp_is_initial_device();
  }
  return on_device;
}
)";
const char* kSum = R"(int sum_on_device(int n, const float *y) {
  float s = 0;
#pragma omp target teams distribute parallel for reduction(+: s) map(to: y[0:n]) map(tofrom: s)
  for (int i = 0; i < n; ++i) s += y[i];
  return (int)s;
}
)";
// Two plain sources, two offload sources, the offload link: each through $(LAUNCH).
const char* kMakefile = R"(CC = /usr/bin/clang-22
OFFLOAD = -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu
prog: main.o util.o saxpy.o sum.o
	$(LAUNCH) $(CC) $(OFFLOAD) $^ -o $@
saxpy.o sum.o: %.o: %.c
	$(LAUNCH) $(CC) $(OFFLOAD) -O2 -c $< -o $@
main.o util.o: %.o: %.c
	$(LAUNCH) $(CC) -O2 -c $< -o $@
)";

const std::string kNote = "offload-build: note: offload compiles run locally, not through distcc";

void write_project(const fs::path& dir) {
  write_file(dir / "main.c", kMain);
  write_file(dir / "util.c", kUtil);
  write_file(dir / "saxpy.c", kSaxpy);
  write_file(dir / "sum.c", kSum);
  write_file(dir / "Makefile", kMakefile);
}

std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& line : util::split(text, '\n'))
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("distcc: plain compiles go through prefix_command, offload compiles run locally",
          "[launcher][distcc][integration]") {
  if (!fs::exists(kDistccd) || !fs::exists(kDistcc)) OB_SKIP("distcc is not installed (package distcc)");
  Launcher l;
  fs::permissions(l.tmp.path(), fs::perms(0755));  // distccd's user works in its directory below
  if (geteuid() == 0)
    if (auto dir = unreachable_for_others(l.tmp.path()))
      OB_SKIP("another user cannot reach the test's temporary directory: " << dir->string()
              << " is not searchable by others (set TMPDIR to a directory they can enter)");
  Distccd local(l.tmp / "distccd-1", "127.0.0.1");
  Distccd remote(l.tmp / "distccd-2", "127.0.0.2");
  const fs::path project = l.tmp / "project";
  write_project(project);
  const fs::path client_log = l.tmp / "distcc.log";
  fs::create_directories(l.tmp / "distcc-dir");
  // The client sends to 127.0.0.2 only and never compiles locally in its stead.
  const Env distcc_env{{"DISTCC_HOSTS", remote.host()},
                       {"DISTCC_FALLBACK", "0"},
                       {"DISTCC_LOG", client_log.string()},
                       {"DISTCC_DIR", (l.tmp / "distcc-dir").string()},
                       {"DISTCC_VERBOSE", std::nullopt},
                       {"OFFLOAD_BUILD_PREFIX_COMMAND", std::nullopt}};

  // make the project with `launch` in front of each compile and the link;
  // the program must offload and compute the right sum.
  auto build = [&](const std::string& launch, Env more) {
    more.insert(more.begin(), distcc_env.begin(), distcc_env.end());
    Argv make{"make", "-j2", "LAUNCH=" + launch};
    for (const auto& [name, value] : more)
      if (name == "CC") make.push_back("CC=" + *value);  // the Makefile's compiler
    auto made = run_tool(make, project, l.env(more));
    INFO(made.out << made.err);
    REQUIRE(made.exit_code == 0);
    auto ran = run_tool({(project / "prog").string()}, project, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
    INFO(ran.err);
    CHECK(ran.exit_code == 0);
    CHECK(ran.out == "offloaded=1 sum=5000\n");
    return made;
  };
  // The client's log: both plain sources compiled on 127.0.0.2, nothing else
  // sent; the daemons' logs agree.
  auto check_logs = [&] {
    const std::string log = read_file(client_log);
    INFO(log);
    const auto sent = lines_with(log, " exec on ");
    CHECK(sent.size() == 2);
    for (const auto& line : sent) CHECK(line.find("exec on " + remote.host()) != std::string::npos);
    CHECK(lines_with(log, "compile main.c on " + remote.host() + " completed ok").size() == 1);
    CHECK(lines_with(log, "compile util.c on " + remote.host() + " completed ok").size() == 1);
    for (const std::string offload : {"saxpy.c", "sum.c", "-fopenmp", "offload", ".o -o prog"})
      CHECK(log.find(offload) == std::string::npos);
    const std::string served = read_file(remote.log);
    INFO(served);
    CHECK(lines_with(served, "COMPILE_OK").size() == 2);
    CHECK(lines_with(served, "saxpy.c").empty());
    CHECK(lines_with(served, "sum.c").empty());
    CHECK(lines_with(read_file(local.log), "COMPILE_OK").empty());  // not in DISTCC_HOSTS
    // offload-build split the offload compiles and cached the plain ones
    // whole: each a miss, run through the prefix (the log above), none unchanged.
    const auto stats = l.stats();
    CHECK(stats["misses"].get<int>() > 2);
    CHECK(stats["stores"].get<int>() > 2);
    CHECK(stats["unchanged_by_reason"].value("not an offload compile", 0) == 0);
  };

  SECTION("prefix_command=distcc ($OFFLOAD_BUILD_PREFIX_COMMAND)") {
    auto made = build(OB_BINARY, {{"OFFLOAD_BUILD_PREFIX_COMMAND", "distcc"}});
    check_logs();
    CHECK(made.err.find(kNote) == std::string::npos);  // the setting says nothing
  }
  SECTION("offload-build distcc clang ...: distcc in the compiler position, one note per build") {
    auto made = build(std::string(OB_BINARY) + " distcc", {});
    check_logs();
    INFO(made.err);
    CHECK(count_occurrences(made.err, kNote) == 1);  // 2 offload compiles and the link: said once
  }
  SECTION("a masquerade directory first on PATH (clang-22 a link to distcc), as /usr/lib/distcc") {
    const fs::path masquerade = l.tmp / "masquerade";
    fs::create_directories(masquerade);
    fs::create_symlink(kDistcc, masquerade / "clang-22");
    // Then LLVM's own directory, as apt.llvm.org advises: its clang-22 is the
    // one found, and distccd refuses a compiler by absolute path outside
    // /usr/bin, so the compile goes as the link would send it: by name.
    const char* path = std::getenv("PATH");
    auto made = build(OB_BINARY, {{"PATH", masquerade.string() + ":/usr/lib/llvm-22/bin:" +
                                               (path ? path : "/usr/bin:/bin")},
                                  {"CC", "clang-22"}});
    check_logs();
    CHECK(count_occurrences(made.err, kNote) == 1);
  }
  SECTION("--prefix-command, words split on spaces") {
    auto r = run_ob({"--prefix-command", " distcc  ", "wrap", "--", "/usr/bin/clang-22", "-O2", "-c", "util.c",
                     "-o", "util.o"},
                    project, l.env(distcc_env));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(lines_with(read_file(client_log), "compile util.c on " + remote.host() + " completed ok").size() == 1);
    // Cached whole: the same compile again is a hit and runs nothing, distcc neither.
    fs::remove(project / "util.o");
    auto again = run_ob({"--prefix-command", " distcc  ", "wrap", "--", "/usr/bin/clang-22", "-O2", "-c", "util.c",
                         "-o", "util.o"},
                        project, l.env(distcc_env));
    REQUIRE(again.exit_code == 0);
    CHECK(fs::exists(project / "util.o"));
    CHECK(l.stats()["hits"] == 1);
    CHECK(lines_with(read_file(client_log), "compile util.c on " + remote.host() + " completed ok").size() == 1);
    auto missing = run_ob({"--prefix-command", "no-such-distcc -j", "wrap", "--", "/usr/bin/clang-22", "-c",
                           "util.c", "-o", "util.o"},
                          project, l.env(distcc_env));
    CHECK(missing.exit_code == 127);
    CHECK(missing.err.find("offload-build: error: prefix_command: cannot run no-such-distcc") != std::string::npos);
  }
  SECTION("without offload-build: distcc drops the device code, exit 0") {
    const Argv offload{"/usr/bin/clang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2", "-c",
                       "saxpy.c"};
    auto plain = run_tool(concat({kDistcc.string()}, concat(offload, {"-o", "distcc.o"})), project,
                          l.env(distcc_env));
    INFO(plain.err);
    REQUIRE(plain.exit_code == 0);
    CHECK(lines_with(read_file(client_log), "compile saxpy.c on " + remote.host() + " completed ok").size() == 1);
    auto ours = run_ob(concat({"distcc"}, concat(offload, {"-o", "ours.o"})), project, l.env(distcc_env));
    REQUIRE(ours.exit_code == 0);
    // The object distcc brings back has no device image; offload-build's has.
    CHECK(read_file(project / "distcc.o").find(".llvm.offloading") == std::string::npos);
    CHECK(read_file(project / "ours.o").find(".llvm.offloading") != std::string::npos);
  }
}

TEST_CASE("distcc: offload options in a --config file or CCC_OVERRIDE_OPTIONS keep the compile local",
          "[launcher][distcc][flagkeys][integration]") {
  if (!fs::exists(kDistccd) || !fs::exists(kDistcc)) OB_SKIP("distcc is not installed (package distcc)");
  Launcher l;
  Distccd remote(l.tmp / "distccd", "127.0.0.2");
  const fs::path project = l.tmp / "project";
  write_project(project);
  const fs::path client_log = l.tmp / "distcc.log";
  fs::create_directories(l.tmp / "distcc-dir");
  const fs::path cfg = project / "offload.cfg";
  write_file(cfg, "-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu\n");
  Env env = l.env({{"DISTCC_HOSTS", remote.host()},
                   {"DISTCC_FALLBACK", "0"},
                   {"DISTCC_LOG", client_log.string()},
                   {"DISTCC_DIR", (l.tmp / "distcc-dir").string()},
                   {"DISTCC_VERBOSE", std::nullopt},
                   {"CCC_OVERRIDE_OPTIONS", std::nullopt},
                   {"OFFLOAD_BUILD_PREFIX_COMMAND", std::nullopt}});
  // The plain sources and sum.c compiled here by clang alone; saxpy.c as `compile` says.
  for (const Argv& c : {Argv{kClang, "-O2", "-c", "main.c"}, Argv{kClang, "-O2", "-c", "util.c"},
                        Argv{kClang, "-O2", "-fopenmp", kHostTargets, "-c", "sum.c"}})
    REQUIRE(run_tool(c, project, env).exit_code == 0);
  auto check = [&](const Argv& compile, const Env& more) {
    Env e = env;
    e.insert(e.end(), more.begin(), more.end());
    auto r = run_ob(concat({"--prefix-command", "distcc", "wrap", "--"}, compile), project, e);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // Nothing sent: the client's log and the daemon's name no offload compile.
    const std::string sent = fs::exists(client_log) ? read_file(client_log) : "";
    INFO(sent);
    CHECK(sent.find("saxpy.c") == std::string::npos);
    CHECK(lines_with(read_file(remote.log), "COMPILE_OK").empty());
    CHECK(read_file(project / "saxpy.o").find(".llvm.offloading") != std::string::npos);
    auto linked = run_tool({kClang, "-fopenmp", kHostTargets, "main.o", "util.o", "saxpy.o", "sum.o", "-o", "prog"},
                           project, env);
    INFO(linked.err);
    REQUIRE(linked.exit_code == 0);
    auto ran = run_tool({(project / "prog").string()}, project, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
    INFO(ran.err);
    CHECK(ran.exit_code == 0);
    CHECK(ran.out == "offloaded=1 sum=5000\n");
    fs::remove(project / "saxpy.o");
  };
  SECTION("--config=FILE holding the offload options") {
    check({kClang, "--config=" + cfg.string(), "-O2", "-c", "saxpy.c", "-o", "saxpy.o"}, {});
  }
  SECTION("--config FILE inside a response file") {
    write_file(project / "args.rsp", "--config " + cfg.string());
    check({kClang, "@args.rsp", "-O2", "-c", "saxpy.c", "-o", "saxpy.o"}, {});
  }
  SECTION("CCC_OVERRIDE_OPTIONS adding the offload targets") {
    check({kClang, "-fopenmp", "-O2", "-c", "saxpy.c", "-o", "saxpy.o"},
          {{"CCC_OVERRIDE_OPTIONS", "#+" + kHostTargets}});
  }
  SECTION("CCC_OVERRIDE_OPTIONS with an edit not modeled") {
    check({kClang, "-fopenmp", "-fopenmp-targets=none", "-O2", "-c", "saxpy.c", "-o", "saxpy.o"},
          {{"CCC_OVERRIDE_OPTIONS", "#s/-fopenmp-targets=none/" + kHostTargets + "/"}});
  }
}
