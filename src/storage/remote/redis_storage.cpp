// Redis remote storage (hiredis): entries are string values under
// "offload-build:v<format>:<kind>:<key>" (redis_key). GET, SET, EXISTS when not
// overwriting, DEL; AUTH and SELECT after connecting. Each call (get, put,
// remove) is bounded as a whole by operation-timeout and every reply by
// max-entry-size (RedisBackend below). Works with any server
// that speaks the Redis protocol. No TTL: configure the server's eviction
// (maxmemory-policy allkeys-lru), as ccache's manual says.
#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "offload_build/storage/remote/backend_registry.hpp"
#include "offload_build/storage/remote/resp_reader.hpp"

namespace ob::storage {

namespace {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};

struct CommandFree {
  void operator()(char* c) const { redisFreeCommand(c); }
};

using Clock = std::chrono::steady_clock;

timeval to_timeval(int ms) { return {ms / 1000, (ms % 1000) * 1000}; }

// A host name resolved to one numeric address, waiting at most `timeout_ms`.
// hiredis 0.14 resolves with a blocking getaddrinfo that its connect timeout
// does not cover: a slow or unreachable DNS server would cost the resolver's
// own timeouts (5 s per try and server by default). So the name is resolved
// here on a detached thread; past the timeout we give up and the thread
// finishes alone (it owns what it found). hiredis then gets the number, which
// it resolves without a query. IPv4 first, as hiredis does.
RemoteResult<std::string> resolve_bounded(const std::string& host, int timeout_ms) {
  unsigned char probe[sizeof(in6_addr)];
  if (::inet_pton(AF_INET, host.c_str(), probe) == 1 || ::inet_pton(AF_INET6, host.c_str(), probe) == 1)
    return host;  // already a number
  struct Resolution {
    std::mutex mu;
    std::condition_variable done_cv;
    bool done = false;
    int rc = 0;
    std::string address;
  };
  auto state = std::make_shared<Resolution>();
  std::thread([state, host] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
    std::string address;
    for (int family : {AF_INET, AF_INET6}) {
      for (addrinfo* a = found; rc == 0 && a && address.empty(); a = a->ai_next) {
        if (a->ai_family != family) continue;
        char text[INET6_ADDRSTRLEN] = {};
        const void* raw = family == AF_INET
                              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
        if (::inet_ntop(family, raw, text, sizeof text)) address = text;
      }
    }
    if (found) ::freeaddrinfo(found);
    std::lock_guard lock(state->mu);
    state->rc = rc;
    state->address = std::move(address);
    state->done = true;
    state->done_cv.notify_all();
  }).detach();
  std::unique_lock lock(state->mu);
  if (!state->done_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return state->done; }))
    return RemoteFailure{RemoteFailure::Kind::Timeout,
                         fmt::format("resolving {} took longer than {} ms", host, timeout_ms)};
  if (state->rc != 0 || state->address.empty())
    return RemoteFailure{RemoteFailure::Kind::Error,
                         fmt::format("cannot resolve {}: {}", host,
                                     state->rc ? ::gai_strerror(state->rc) : "no IPv4 or IPv6 address")};
  return state->address;
}

// Server text (an error reply) for a message: at most 200 bytes, printable.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 200)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  if (text.size() > 200) out += "...";
  return out;
}

// hiredis connects (connect-timeout, unix sockets) and formats commands; the
// I/O is ours, on the context's socket: every backend call (get, put,
// remove) has one deadline, operation-timeout after connecting, for all its
// commands (AUTH and SELECT on a new connection included), each written and
// its whole reply read with poll() against that deadline. hiredis' own
// timeout bounds each read() only, so a server trickling a byte a second
// could stall a build for as long as it went on. Replies are read by our
// RespReader, which refuses a value over max-entry-size and any array before
// allocating them. send() with MSG_NOSIGNAL: a server gone mid-request is
// EPIPE, not a SIGPIPE that would kill the build.
class RedisBackend final : public RemoteBackend {
 public:
  explicit RedisBackend(RemoteConfig config) : config_(std::move(config)) {}

  RemoteResult<std::optional<std::string>> get(std::string_view kind,
                                               std::string_view key) override {
    auto reply = request({"GET", redis_key(kind, key)}, "GET");
    if (!reply) return reply.failure();
    RespReply& r = *reply;
    if (r.type == RespReply::Type::Nil) return std::optional<std::string>{};
    if (r.type == RespReply::Type::Bulk) return std::optional<std::string>{std::move(r.text)};
    return unexpected("GET", r);
  }

  RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value,
                         bool overwrite) override {
    if (value.size() > config_.max_entry_bytes) return false;  // not sent: over max-entry-size
    const std::string k = redis_key(kind, key);
    auto started = start();
    if (!started) return started.failure();
    if (!overwrite) {
      auto exists = command({"EXISTS", k}, "EXISTS");
      if (!exists) return exists.failure();
      if ((*exists).type == RespReply::Type::Integer && (*exists).integer > 0) return false;
    }
    auto reply = command({"SET", k, value}, "SET");
    if (!reply) return reply.failure();
    if ((*reply).type == RespReply::Type::Status) return true;
    return unexpected("SET", *reply);
  }

  RemoteResult<bool> remove(std::string_view kind, std::string_view key) override {
    auto reply = request({"DEL", redis_key(kind, key)}, "DEL");
    if (!reply) return reply.failure();
    if ((*reply).type == RespReply::Type::Integer) return (*reply).integer > 0;
    return unexpected("DEL", *reply);
  }

 private:
  RemoteFailure unexpected(const char* what, const RespReply& r) {
    ctx_.reset();  // a server answering out of turn: start again on a new connection
    if (r.type == RespReply::Type::Error)
      return {RemoteFailure::Kind::Error, fmt::format("{}: {}", what, printable(r.text))};
    static const char* const names[] = {"a status", "an error", "an integer", "a bulk string", "nil"};
    return {RemoteFailure::Kind::Error,
            fmt::format("{}: unexpected reply ({})", what, names[static_cast<int>(r.type)])};
  }

  RemoteFailure io_failure(RemoteFailure::Kind kind, std::string message) {
    ctx_.reset();  // the reply stream is out of step now; the layer disables this remote anyway
    return {kind, std::move(message)};
  }

  RemoteFailure timed_out(const char* what, const char* phase) {
    return io_failure(RemoteFailure::Kind::Timeout,
                      fmt::format("{}: {} within operation-timeout ({} ms)", what, phase,
                                  config_.operation_timeout_ms));
  }

  // Wait until the socket is ready for `events`: 1, 0 at the deadline, -1 on error.
  int wait(short events) {
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) return 0;
      pollfd p{ctx_->fd, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (r > 0) return 1;
      if (r < 0 && errno != EINTR) return -1;
    }
  }

  // One command sent and its reply read, before deadline_.
  RemoteResult<RespReply> command(const std::vector<std::string_view>& args, const char* what) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (auto a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    char* raw = nullptr;
    const int length = redisFormatCommandArgv(&raw, static_cast<int>(argv.size()), argv.data(), lens.data());
    std::unique_ptr<char, CommandFree> formatted(raw);
    if (length < 0 || !raw) return io_failure(RemoteFailure::Kind::Error, fmt::format("{}: out of memory", what));
    for (size_t sent = 0; sent < static_cast<size_t>(length);) {
      const ssize_t n = ::send(ctx_->fd, raw + sent, static_cast<size_t>(length) - sent,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        return io_failure(RemoteFailure::Kind::Error, fmt::format("{}: cannot send: {}", what, std::strerror(errno)));
      const int ready = wait(POLLOUT);
      if (ready == 0) return timed_out(what, "the request was not sent");
      if (ready < 0) return io_failure(RemoteFailure::Kind::Error, fmt::format("{}: {}", what, std::strerror(errno)));
    }
    formatted.reset();
    RespReader reader(config_.max_entry_bytes);
    char buffer[64 * 1024];
    for (;;) {
      const ssize_t n = ::recv(ctx_->fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        const auto state = reader.feed(std::string_view(buffer, static_cast<size_t>(n)));
        if (state == RespReader::State::Done) return std::move(reader.reply());
        if (state == RespReader::State::Bad)
          return io_failure(RemoteFailure::Kind::Error, fmt::format("{}: {}", what, reader.error()));
        continue;
      }
      if (n == 0)
        return io_failure(RemoteFailure::Kind::Error,
                          fmt::format("{}: the server closed the connection before its whole reply", what));
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        return io_failure(RemoteFailure::Kind::Error, fmt::format("{}: {}", what, std::strerror(errno)));
      const int ready = wait(POLLIN);
      if (ready == 0) return timed_out(what, "no whole reply");
      if (ready < 0) return io_failure(RemoteFailure::Kind::Error, fmt::format("{}: {}", what, std::strerror(errno)));
    }
  }

  // Connect when needed (connect-timeout: resolving and connecting), then
  // start this call's deadline (operation-timeout), which also covers AUTH
  // and SELECT on a new connection.
  RemoteResult<bool> start() {
    if (ctx_) {
      deadline_ = Clock::now() + std::chrono::milliseconds(call_ms(config_.operation_timeout_ms));
      return true;
    }
    const auto begin = Clock::now();
    std::string address;
    if (config_.scheme != RemoteConfig::Scheme::RedisUnix) {
      auto resolved = resolve_bounded(config_.host, config_.connect_timeout_ms);
      if (!resolved) {
        RemoteFailure f = resolved.failure();
        f.message = "connect: " + f.message;
        return f;
      }
      address = std::move(*resolved);
    }
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - begin).count();
    errno = 0;
    const timeval tv = to_timeval(std::max(1, config_.connect_timeout_ms - static_cast<int>(spent)));
    redisContext* c = config_.scheme == RemoteConfig::Scheme::RedisUnix
                          ? redisConnectUnixWithTimeout(config_.path.c_str(), tv)
                          : redisConnectWithTimeout(address.c_str(), config_.port ? config_.port : 6379, tv);
    const int saved = errno;
    if (!c) return RemoteFailure{RemoteFailure::Kind::Error, "cannot allocate a Redis context"};
    ctx_.reset(c);
    if (c->err) {
      // hiredis (0.14) reports a timed-out connect as an I/O error with errno
      // EAGAIN, ETIMEDOUT or EINPROGRESS.
      RemoteFailure f{RemoteFailure::Kind::Error, "connect: " + std::string(c->errstr[0] ? c->errstr : std::strerror(saved))};
      if (c->err == REDIS_ERR_IO && (saved == EAGAIN || saved == EWOULDBLOCK || saved == ETIMEDOUT || saved == EINPROGRESS))
        f.kind = RemoteFailure::Kind::Timeout;
      ctx_.reset();
      return f;
    }
    deadline_ = Clock::now() + std::chrono::milliseconds(call_ms(config_.operation_timeout_ms));
    if (config_.has_password) {
      std::vector<std::string_view> auth{"AUTH"};
      if (!config_.user.empty()) auth.push_back(config_.user);
      auth.push_back(config_.password);
      auto r = command(auth, "AUTH");
      if (!r) return r.failure();
      if ((*r).type == RespReply::Type::Error) return unexpected("AUTH", *r);
    }
    if (config_.db != 0) {
      std::string db = std::to_string(config_.db);
      auto r = command({"SELECT", db}, "SELECT");
      if (!r) return r.failure();
      if ((*r).type == RespReply::Type::Error) return unexpected("SELECT", *r);
    }
    return true;
  }

  // start() and one command: an error reply ("NOAUTH") is the caller's to judge.
  RemoteResult<RespReply> request(const std::vector<std::string_view>& args, const char* what) {
    auto started = start();
    if (!started) return started.failure();
    return command(args, what);
  }

  RemoteConfig config_;
  std::unique_ptr<redisContext, ContextFree> ctx_;
  Clock::time_point deadline_;
};

}  // namespace

std::unique_ptr<RemoteBackend> make_redis_backend(const RemoteConfig& config) {
  return std::make_unique<RedisBackend>(config);
}

// redis://[[USER:]PASSWORD@]HOST[:PORT][/DB] and redis+unix:[//]/SOCKET[?db=N];
// no attributes of their own.
std::vector<RemoteScheme> redis_schemes() {
  RemoteScheme tcp;
  tcp.prefix = "redis://";
  tcp.usage = "redis://HOST[:PORT][/DB]";
  tcp.parse_url = [](std::string_view rest, RemoteConfig& c) -> UrlProblem {
    c.scheme = RemoteConfig::Scheme::Redis;
    std::string_view path;
    if (auto problem = parse_remote_authority(rest, c, true, path)) return problem;
    if (!path.empty() && path != "/") {
      auto db = parse_remote_int(path.substr(1), 1 << 20);
      if (!db) return "the path of a redis:// URL is a database number (/0, /1, ...)";
      c.db = *db;
    }
    return std::nullopt;
  };
  tcp.display = [](const RemoteConfig& c) {
    return "redis://" + display_remote_authority(c) + (c.db ? fmt::format("/{}", c.db) : "");
  };
  tcp.create = make_redis_backend;

  RemoteScheme unix_socket = tcp;
  unix_socket.prefix = "redis+unix:";
  unix_socket.usage = "redis+unix:///SOCKET";
  unix_socket.parse_url = [](std::string_view rest, RemoteConfig& c) -> UrlProblem {
    c.scheme = RemoteConfig::Scheme::RedisUnix;
    if (rest.substr(0, 2) == "//") rest.remove_prefix(2);
    size_t q = rest.find('?');
    c.path = std::string(rest.substr(0, q));
    if (c.path.empty() || c.path.front() != '/')
      return "the socket must be an absolute path: redis+unix:///path/to/socket";
    if (q != std::string_view::npos) {
      std::string_view query = rest.substr(q + 1);
      if (query.substr(0, 3) != "db=") return "the only query is ?db=N";
      auto db = parse_remote_int(query.substr(3), 1 << 20);
      if (!db) return "?db= wants a database number";
      c.db = *db;
    }
    return std::nullopt;
  };
  unix_socket.display = [](const RemoteConfig& c) {
    return "redis+unix://" + c.path + (c.db ? fmt::format("?db={}", c.db) : "");
  };
  return {tcp, unix_socket};
}

}  // namespace ob::storage
