// Redis remote storage (hiredis): entries are string values under
// "offload-build:v<format>:<kind>:<key>" (redis_key). GET, SET, EXISTS when not
// overwriting, DEL; AUTH and SELECT after connecting. Works with any server
// that speaks the Redis protocol. No TTL: configure the server's eviction
// (maxmemory-policy allkeys-lru), as ccache's manual says.
#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
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

#include "offload_build/cache/storage/remote.hpp"

namespace ob::cache {

namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};

timeval to_timeval(int ms) { return {ms / 1000, (ms % 1000) * 1000}; }

// hiredis writes with write(2): a server gone mid-request would raise SIGPIPE
// and kill the build. Blocked in this thread around each call, and a SIGPIPE
// raised meanwhile consumed (what libcurl does for OpenSSL), so the write
// fails with EPIPE instead; nothing else in the process changes.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

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

class RedisBackend final : public RemoteBackend {
 public:
  explicit RedisBackend(RemoteConfig config) : config_(std::move(config)) {}

  RemoteResult<std::optional<std::string>> get(std::string_view kind,
                                               std::string_view key) override {
    auto reply = command({"GET", redis_key(kind, key)});
    if (!reply) return reply.failure();
    redisReply* r = (*reply).get();
    if (r->type == REDIS_REPLY_NIL) return std::optional<std::string>{};
    if (r->type == REDIS_REPLY_STRING) return std::optional<std::string>{std::string(r->str, r->len)};
    return unexpected("GET", r);
  }

  RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value,
                         bool overwrite) override {
    const std::string k = redis_key(kind, key);
    if (!overwrite) {
      auto exists = command({"EXISTS", k});
      if (!exists) return exists.failure();
      if ((*exists)->type == REDIS_REPLY_INTEGER && (*exists)->integer > 0) return false;
    }
    auto reply = command({"SET", k, value});
    if (!reply) return reply.failure();
    if ((*reply)->type == REDIS_REPLY_STATUS) return true;
    return unexpected("SET", (*reply).get());
  }

  RemoteResult<bool> remove(std::string_view kind, std::string_view key) override {
    auto reply = command({"DEL", redis_key(kind, key)});
    if (!reply) return reply.failure();
    if ((*reply)->type == REDIS_REPLY_INTEGER) return (*reply)->integer > 0;
    return unexpected("DEL", (*reply).get());
  }

 private:
  static RemoteFailure unexpected(const char* what, redisReply* r) {
    if (r->type == REDIS_REPLY_ERROR)
      return {RemoteFailure::Kind::Error, fmt::format("{}: {}", what, std::string(r->str, r->len))};
    return {RemoteFailure::Kind::Error, fmt::format("{}: unexpected reply type {}", what, r->type)};
  }

  // The context's failure, as error or timeout. hiredis (0.14) reports a
  // timed-out read or connect as an I/O error with errno EAGAIN or ETIMEDOUT.
  RemoteFailure context_failure(int saved_errno) {
    RemoteFailure f;
    f.message = ctx_ && ctx_->errstr[0] ? ctx_->errstr : std::strerror(saved_errno);
    if (ctx_ && ctx_->err == REDIS_ERR_IO &&
        (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT ||
         saved_errno == EINPROGRESS))
      f.kind = RemoteFailure::Kind::Timeout;
    ctx_.reset();  // unusable now; the layer disables this remote anyway
    return f;
  }

  RemoteResult<Reply> raw(const std::vector<std::string_view>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (auto a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    SigpipeGuard guard;
    errno = 0;
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data()));
    int saved = errno;
    if (!r) return context_failure(saved);
    return Reply(r);
  }

  RemoteResult<bool> connect() {
    if (ctx_) return true;
    // connect-timeout bounds resolving and connecting together, as libcurl's does.
    const auto start = std::chrono::steady_clock::now();
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
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start).count();
    errno = 0;
    const timeval tv = to_timeval(std::max(1, config_.connect_timeout_ms - static_cast<int>(spent)));
    redisContext* c = config_.scheme == RemoteConfig::Scheme::RedisUnix
                          ? redisConnectUnixWithTimeout(config_.path.c_str(), tv)
                          : redisConnectWithTimeout(address.c_str(),
                                                    config_.port ? config_.port : 6379, tv);
    int saved = errno;
    if (!c) return RemoteFailure{RemoteFailure::Kind::Error, "cannot allocate a Redis context"};
    ctx_.reset(c);
    if (c->err) {
      auto f = context_failure(saved);
      f.message = "connect: " + f.message;
      return f;
    }
    if (redisSetTimeout(c, to_timeval(config_.operation_timeout_ms)) != REDIS_OK)
      return context_failure(errno);
    if (config_.has_password) {
      std::vector<std::string_view> auth{"AUTH"};
      if (!config_.user.empty()) auth.push_back(config_.user);
      auth.push_back(config_.password);
      auto r = raw(auth);
      if (!r) return r.failure();
      if ((*r)->type == REDIS_REPLY_ERROR) {
        auto f = unexpected("AUTH", (*r).get());
        ctx_.reset();
        return f;
      }
    }
    if (config_.db != 0) {
      std::string db = std::to_string(config_.db);
      auto r = raw({"SELECT", db});
      if (!r) return r.failure();
      if ((*r)->type == REDIS_REPLY_ERROR) {
        auto f = unexpected("SELECT", (*r).get());
        ctx_.reset();
        return f;
      }
    }
    return true;
  }

  RemoteResult<Reply> command(const std::vector<std::string_view>& args) {
    auto connected = connect();
    if (!connected) return connected.failure();
    return raw(args);  // an error reply ("NOAUTH") is the caller's to judge
  }

  RemoteConfig config_;
  std::unique_ptr<redisContext, ContextFree> ctx_;
};

}  // namespace

std::unique_ptr<RemoteBackend> make_redis_backend(const RemoteConfig& config) {
  return std::make_unique<RedisBackend>(config);
}

}  // namespace ob::cache
