// util::read_regular_file, the one bounded whole-file reader: a symlink to
// /dev/zero or /dev/urandom, a FIFO, an oversized file and a /proc file are
// refused at once, with the file and what is wrong named. Each read runs in a
// forked child with an alarm and an address-space limit, so a regression
// (reading /dev/zero forever, blocking on the FIFO) fails the test instead of
// hanging it or eating the machine's memory.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/util/files.hpp"
#include "offload_build/util/paths.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using ob::test::TempDir;

namespace {

struct Outcome {
  bool finished = false;  // exited by itself (no alarm, no memory kill)
  std::string error;      // the error message; empty when the read succeeded
  // Bytes the child read while it ran `read` (/proc/self/io's rchar, reading
  // that file once included: some 100 bytes); -1 where the kernel does not
  // count them.
  long long bytes_read = -1;
};

// Bytes this process has read so far (read() and the like), or -1.
long long bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  for (std::string line; std::getline(io, line);)
    if (line.rfind("rchar:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

// Run `read` (returning the error message, empty on success) in a child with
// a 20 s alarm and a 1 GiB address-space limit; the bytes it read and the
// message come back through a pipe.
template <class Fn>
Outcome bounded(Fn read) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(20);
    struct rlimit lim {uint64_t{1} << 30, uint64_t{1} << 30};
    ::setrlimit(RLIMIT_AS, &lim);
    const long long before = bytes_read_so_far();
    const std::string msg = read();
    const long long after = bytes_read_so_far();
    const long long count = before < 0 || after < 0 ? -1 : after - before;
    const std::string out = std::to_string(count) + "\n" + msg;  // "COUNT\n" alone: success
    ssize_t ignored = ::write(fds[1], out.data(), out.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Outcome o;
  const size_t nl = got.find('\n');
  o.finished = WIFEXITED(status) && WEXITSTATUS(status) == 0 && nl != std::string::npos;
  if (nl != std::string::npos) {
    o.bytes_read = std::stoll(got.substr(0, nl));
    o.error = got.substr(nl + 1);
  }
  return o;
}

Outcome read_as(const fs::path& file, uint64_t max, const char* what) {
  return bounded([&] {
    auto r = ob::util::read_regular_file(file, max, what);
    return r ? std::string() : r.error().message;
  });
}

}  // namespace

TEST_CASE("read_regular_file refuses devices and FIFOs at once, naming the file", "[files]") {
  TempDir tmp("ob-files");
  for (const char* dev : {"/dev/zero", "/dev/urandom"}) {
    SECTION(std::string("a symlink to ") + dev) {
      const fs::path link = tmp / "offload.json";
      fs::create_symlink(dev, link);
      auto o = read_as(link, ob::manifest::kMaxManifestSize, "a manifest");
      INFO(o.error);
      REQUIRE(o.finished);
      CHECK(o.error == link.string() +
                           ": not a regular file (a character device); a manifest must be a regular file");
      // Refused before a byte of the device was read (a regression reads it
      // to the 16 MiB cap, or forever until the alarm: not finished).
      if (o.bytes_read < 0) {
        WARN("/proc/self/io is not there: the bytes read are not counted");
      } else {
        CHECK(o.bytes_read < 4096);
      }
    }
  }
  SECTION("a FIFO no one writes to: the open does not block") {
    const fs::path fifo = tmp / "offload.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto o = read_as(fifo, ob::manifest::kMaxManifestSize, "a manifest");
    INFO(o.error);
    REQUIRE(o.finished);
    CHECK(o.error == fifo.string() + ": not a regular file (a FIFO); a manifest must be a regular file");
  }
  SECTION("a directory keeps its usual wording") {
    auto o = read_as(tmp.path(), 100, "a manifest");
    REQUIRE(o.finished);
    CHECK(o.error == "cannot read " + tmp.path().string() + ": Is a directory");
  }
}

TEST_CASE("read_regular_file refuses files over the cap, reading at most cap + 1 bytes", "[files]") {
  TempDir tmp("ob-files");
  const fs::path big = tmp / "offload.json";
  {
    std::ofstream(big).put('{');
    fs::resize_file(big, uint64_t{40} << 20);  // sparse: 40 MiB that cost nothing
  }
  auto o = read_as(big, ob::manifest::kMaxManifestSize, "a manifest");
  INFO(o.error);
  REQUIRE(o.finished);
  CHECK(o.error == big.string() + " is 40.0 MiB; a manifest is at most 16.0 MiB");

  // A /proc file says its size is 0: the cap still holds while reading.
  auto proc = read_as("/proc/self/status", 64, "a test file");
  REQUIRE(proc.finished);
  CHECK(proc.error == "/proc/self/status is over 64 B; a test file is at most 64 B");

  // At the cap exactly: read whole.
  std::ofstream(tmp / "exact", std::ios::binary) << std::string(64, 'x');
  auto exact = ob::util::read_regular_file(tmp / "exact", 64, "a test file");
  REQUIRE(exact.ok());
  CHECK(exact->size() == 64);
}

TEST_CASE("read_regular_file: a missing file says so and reports ENOENT", "[files]") {
  TempDir tmp("ob-files");
  int err = -1;
  auto r = ob::util::read_regular_file(tmp / "nope", 10, "a depfile", &err);
  REQUIRE_FALSE(r.ok());
  CHECK(err == ENOENT);
  CHECK(r.error().code == ob::exit_code::usage);
  CHECK(r.error().message == "cannot read " + (tmp / "nope").string() + ": No such file or directory");
  CHECK_FALSE(ob::util::read_file(tmp / "nope"));
}

TEST_CASE("load_manifest refuses a manifest that is a symlink to /dev/zero, or too large", "[files][manifest]") {
  TempDir tmp("ob-files");
  const fs::path link = tmp / "offload.json";
  fs::create_symlink("/dev/zero", link);
  auto o = bounded([&] {
    auto m = ob::manifest::load_manifest(link, ob::toolchain::frontend::manifest_options());
    return m ? std::string() : std::to_string(m.error().code) + " " + m.error().message;
  });
  REQUIRE(o.finished);
  CHECK(o.error == "2 " + link.string() +
                       ": not a regular file (a character device); a manifest must be a regular file");
}

TEST_CASE("response files: /dev/zero, a FIFO and an oversized file are refused at once", "[files][launcher]") {
  TempDir tmp("ob-files");
  fs::create_symlink("/dev/zero", tmp / "zero.rsp");
  REQUIRE(::mkfifo((tmp / "fifo.rsp").c_str(), 0600) == 0);
  {
    std::ofstream(tmp / "big.rsp").put('-');
    fs::resize_file(tmp / "big.rsp", ob::toolchain::clang_cli::kMaxResponseFile + 1);
  }
  for (const char* rsp : {"zero.rsp", "fifo.rsp", "big.rsp"}) {
    INFO(rsp);
    auto o = bounded([&] {
      std::string problem;
      auto r = ob::toolchain::clang_cli::expand_response_files({"clang", std::string("@") + rsp, "k.c"}, tmp.path(),
                                                               &problem);
      return r ? std::string() : problem;
    });
    INFO(o.error);
    REQUIRE(o.finished);
    CHECK_THAT(o.error, Catch::StartsWith((tmp / rsp).string()));
    CHECK_THAT(o.error, Catch::Contains("a response file"));
  }
}

TEST_CASE("is_under: strictly under a directory, as lexically_relative says", "[util]") {
  auto slow = [](const fs::path& p, const fs::path& d) {
    if (d.empty()) return false;
    const fs::path rel = p.lexically_relative(d);
    return !rel.empty() && *rel.begin() != "..";
  };
  const std::vector<std::string> paths = {"/usr/include/stdio.h", "/usr", "/usr/", "/usrx/a", "/usr/lib/",
                                          "/", "/a/b/../c", "/a/./b", "a/b", "a", "/home/u/p/src/k.c",
                                          "/home/u/p", "/home/u/p2/x", ".hidden/x", "/a/.git/x", "//usr/x", ""};
  const std::vector<std::string> dirs = {"/usr", "/usr/", "/", "/home/u/p", "a", "/a", ".hidden", "/a/.git", "", "//usr"};
  for (const auto& p : paths)
    for (const auto& d : dirs) {
      INFO(p << " under " << d);
      CHECK(ob::util::is_under(p, d) == slow(p, d));
    }
}
