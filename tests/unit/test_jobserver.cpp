// The make jobserver client: MAKEFLAGS parsing, tokens over a real pipe and
// fifo, and the executor holding one token per job beyond the first.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offload_build/exec/executor.hpp"
#include "offload_build/process/jobserver.hpp"
#include "support/fake_runner.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::process;

TEST_CASE("MAKEFLAGS: --jobserver-auth in pipe and fifo form", "[launcher][jobserver]") {
  auto pipe_auth = parse_makeflags("kw -j8 --jobserver-auth=3,4");
  REQUIRE(pipe_auth);
  CHECK(pipe_auth->style == JobserverAuth::Style::Pipe);
  CHECK(pipe_auth->read_fd == 3);
  CHECK(pipe_auth->write_fd == 4);
  auto fifo = parse_makeflags(" -j4 --jobserver-auth=fifo:/tmp/GMfifo\\ 12");
  REQUIRE(fifo);
  CHECK(fifo->style == JobserverAuth::Style::Fifo);
  CHECK(fifo->fifo == "/tmp/GMfifo 12");
  // Older make spells it --jobserver-fds; the last one wins.
  auto old = parse_makeflags("-j --jobserver-fds=5,6 --jobserver-auth=7,8");
  REQUIRE(old);
  CHECK(old->read_fd == 7);
  CHECK_FALSE(parse_makeflags(""));
  CHECK_FALSE(parse_makeflags("-j8"));  // make -j without a jobserver: none
  CHECK_FALSE(parse_makeflags("--jobserver-auth=3"));
  CHECK_FALSE(parse_makeflags("--jobserver-auth=fifo:"));
}

TEST_CASE("jobserver tokens come from the pipe and go back", "[launcher][jobserver]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  REQUIRE(write(fds[1], "+-", 2) == 2);
  {
    auto js = Jobserver::connect({JobserverAuth::Style::Pipe, fds[0], fds[1], {}});
    REQUIRE(js);
    CHECK(js->try_acquire());
    CHECK(js->try_acquire());
    CHECK_FALSE(js->try_acquire());  // empty: no blocking
    CHECK(js->held() == 2);
    js->release();
    CHECK(js->held() == 1);
  }  // the destructor returns the other
  char buf[4] = {};
  CHECK(read(fds[0], buf, sizeof buf) == 2);
  CHECK((std::string(buf, 2) == "-+" || std::string(buf, 2) == "+-"));
  // The inherited descriptor stays blocking for make and its other children.
  CHECK((fcntl(fds[0], F_GETFL) & O_NONBLOCK) == 0);
  close(fds[0]);
  close(fds[1]);
  // Descriptors that are not open: unreachable.
  CHECK_FALSE(Jobserver::connect({JobserverAuth::Style::Pipe, 900, 901, {}}));
}

TEST_CASE("jobserver tokens through a fifo", "[launcher][jobserver]") {
  test::TempDir tmp;
  const auto path = (tmp / "fifo").string();
  REQUIRE(mkfifo(path.c_str(), 0600) == 0);
  int keep = open(path.c_str(), O_RDWR);  // make holds it open
  REQUIRE(keep >= 0);
  REQUIRE(write(keep, "x", 1) == 1);
  {
    auto js = Jobserver::connect({JobserverAuth::Style::Fifo, -1, -1, path});
    REQUIRE(js);
    CHECK(js->try_acquire());
    CHECK_FALSE(js->try_acquire());
  }
  char c = 0;
  CHECK(read(keep, &c, 1) == 1);
  CHECK(c == 'x');
  close(keep);
  CHECK_FALSE(Jobserver::connect({JobserverAuth::Style::Fifo, -1, -1, (tmp / "none").string()}));
}

TEST_CASE("executor takes a slot for every job beyond the first", "[launcher][jobserver][executor]") {
  test::TempDir tmp;
  plan::Plan plan;
  plan.cwd = tmp.path();
  plan.directories = {tmp / "out"};
  for (int i = 0; i < 8; ++i) {
    plan::Job j;
    j.id = plan.jobs.size();
    j.source = tmp / "src.c";
    j.outputs = {tmp / "out" / std::to_string(i)};
    j.argv = {"tool", "-o", "out/" + std::to_string(i)};
    plan.jobs.push_back(j);
  }
  for (int tokens : {0, 1, 2}) {
    int free = tokens, acquired = 0, released = 0;
    test::FakeRunner runner;
    exec::ExecOptions opts;
    opts.parallelism = 8;
    opts.try_acquire_slot = [&] {
      if (free == 0) return false;
      --free;
      ++acquired;
      return true;
    };
    opts.release_slot = [&] {
      ++free;
      ++released;
    };
    auto summary = exec::execute(plan, runner, opts);
    REQUIRE(summary.ok());
    CHECK(summary->jobs_run == 8);
    CHECK(runner.max_running_seen == size_t(tokens + 1));
    CHECK(acquired == released);  // every token given back
    CHECK(free == tokens);
  }
}
