// Redis remote storage (hiredis): entries are string values under
// "offload-build:v1:<kind>:<key>" (redis_key). GET, SET, EXISTS when not
// overwriting, DEL; AUTH and SELECT after connecting. Works with any server
// that speaks the Redis protocol. No TTL: configure the server's eviction
// (maxmemory-policy allkeys-lru), as ccache's manual says.
#include <hiredis/hiredis.h>

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <memory>

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
    errno = 0;
    const timeval tv = to_timeval(config_.connect_timeout_ms);
    redisContext* c = config_.scheme == RemoteConfig::Scheme::RedisUnix
                          ? redisConnectUnixWithTimeout(config_.path.c_str(), tv)
                          : redisConnectWithTimeout(config_.host.c_str(),
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
