// HTTP remote storage (libcurl): GET / PUT / DELETE of PREFIX/<path>, the path
// given by the layout (http_path): plain WebDAV (nginx `dav_methods PUT
// DELETE`), ccache-style HTTP servers, and bazel-remote's `ac/` namespace.
// GET: 2xx with a body is a value, 404 (and 410) a miss, anything else an
// error (401/403: wrong credentials; 5xx: a broken server). HEAD before PUT
// only when not overwriting, as ccache does. Each call is bounded as a whole
// by connect-timeout + operation-timeout, and every body by max-entry-size.
//
// libcurl is opened with dlopen on first use: linked, its 30-odd libraries
// would be loaded by every launcher compile, with or without a remote.
#include <curl/curl.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "offload_build/storage/remote/backend_registry.hpp"

namespace ob::storage {

namespace {

// The few libcurl functions we call, from libcurl.so.4.
struct CurlApi {
  CURLcode (*global_init)(long) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  void (*easy_reset)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
  std::string problem;  // why it cannot be used

  static const CurlApi& get() {
    static CurlApi api = load();
    return api;
  }

 private:
  template <class F>
  static bool sym(void* lib, const char* name, F& out) {
    out = reinterpret_cast<F>(::dlsym(lib, name));
    return out != nullptr;
  }
  static CurlApi load() {
    CurlApi a;
    void* lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = ::dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      a.problem = "libcurl is not installed (libcurl.so.4; Debian: libcurl4)";
      return a;
    }
    bool ok = sym(lib, "curl_global_init", a.global_init) && sym(lib, "curl_easy_init", a.easy_init) &&
              sym(lib, "curl_easy_setopt", a.easy_setopt) &&
              sym(lib, "curl_easy_perform", a.easy_perform) &&
              sym(lib, "curl_easy_getinfo", a.easy_getinfo) &&
              sym(lib, "curl_easy_cleanup", a.easy_cleanup) &&
              sym(lib, "curl_easy_reset", a.easy_reset) &&
              sym(lib, "curl_easy_strerror", a.easy_strerror) &&
              sym(lib, "curl_slist_append", a.slist_append) &&
              sym(lib, "curl_slist_free_all", a.slist_free_all);
    if (!ok) {
      a.problem = "libcurl.so.4 lacks a function offload-build needs";
      return a;
    }
    if (a.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) a.problem = "curl_global_init failed";
    return a;
  }
};

using Clock = std::chrono::steady_clock;

// A response body, capped at max-entry-size: a Content-Length over it is
// refused before the body is read (read_header), and a body without one
// (chunked) aborted as soon as it grows past it (write_body). A declared size
// is reserved only when within the cap.
struct Body {
  std::string data;
  uint64_t max = 0;
  std::optional<uint64_t> declared;  // Content-Length
  bool too_large = false;
};

size_t read_header(char* ptr, size_t size, size_t n, void* user) {
  auto* body = static_cast<Body*>(user);
  std::string_view line(ptr, size * n);
  constexpr std::string_view name = "content-length:";
  if (line.size() > name.size() &&
      std::equal(name.begin(), name.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    line.remove_prefix(name.size());
    while (!line.empty() && (line[0] == ' ' || line[0] == '\t')) line.remove_prefix(1);
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec == std::errc::result_out_of_range) value = UINT64_MAX;
    if (ec == std::errc() || ec == std::errc::result_out_of_range) {
      body->declared = value;
      if (value > body->max) {
        body->too_large = true;
        return 0;  // aborts the transfer before the body
      }
      body->data.reserve(static_cast<size_t>(value));  // at most the cap: one allocation
    }
  }
  return size * n;
}

size_t write_body(char* ptr, size_t size, size_t n, void* user) {
  auto* body = static_cast<Body*>(user);
  if (size * n > body->max - body->data.size()) {  // data.size() <= max always
    body->too_large = true;
    return 0;  // aborts the transfer
  }
  body->data.append(ptr, size * n);
  return size * n;
}

size_t discard_body(char*, size_t size, size_t n, void*) { return size * n; }

struct Upload {
  std::string_view data;
  size_t pos = 0;
};

size_t read_upload(char* buffer, size_t size, size_t n, void* user) {
  auto* up = static_cast<Upload*>(user);
  size_t count = std::min(size * n, up->data.size() - up->pos);
  std::memcpy(buffer, up->data.data() + up->pos, count);
  up->pos += count;
  return count;
}

class HttpBackend final : public RemoteBackend {
 public:
  explicit HttpBackend(RemoteConfig config) : config_(std::move(config)) {
    base_ = fmt::format("{}://{}{}{}",
                        config_.scheme == RemoteConfig::Scheme::Https ? "https" : "http",
                        config_.host.find(':') != std::string::npos ? "[" + config_.host + "]"
                                                                    : config_.host,
                        config_.port ? fmt::format(":{}", config_.port) : std::string(),
                        config_.path);
  }
  ~HttpBackend() override {
    if (curl_) CurlApi::get().easy_cleanup(curl_);
    if (headers_) CurlApi::get().slist_free_all(headers_);
  }

  RemoteResult<std::optional<std::string>> get(std::string_view kind,
                                               std::string_view key) override {
    Body body;
    body.max = config_.max_entry_bytes;
    auto status = perform("GET", url(kind, key), &body, nullptr, deadline());
    if (!status) return status.failure();
    if (*status == 404 || *status == 410) return std::optional<std::string>{};
    if (*status / 100 != 2) return http_failure("GET", *status);
    if (body.data.empty())  // an empty 2xx is not an entry (ccache counts it as an error)
      return RemoteFailure{RemoteFailure::Kind::Error, fmt::format("GET: empty {} response", *status)};
    return std::optional<std::string>{std::move(body.data)};
  }

  RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value,
                         bool overwrite) override {
    if (value.size() > config_.max_entry_bytes) return false;  // not sent: over max-entry-size
    const std::string target = url(kind, key);
    const auto until = deadline();  // HEAD and PUT together
    if (!overwrite) {
      auto head = perform("HEAD", target, nullptr, nullptr, until);
      if (!head) return head.failure();
      if (*head / 100 == 2) return false;
    }
    Upload up{value};
    auto status = perform("PUT", target, nullptr, &up, until);
    if (!status) return status.failure();
    if (*status / 100 != 2) return http_failure("PUT", *status);
    return true;
  }

  RemoteResult<bool> remove(std::string_view kind, std::string_view key) override {
    auto status = perform("DELETE", url(kind, key), nullptr, nullptr, deadline());
    if (!status) return status.failure();
    if (*status == 404) return false;
    if (*status / 100 != 2) return http_failure("DELETE", *status);
    return true;
  }

 private:
  std::string url(std::string_view kind, std::string_view key) const {
    return base_ + "/" + http_path(config_.layout, kind, key);
  }

  // One call's deadline: connect-timeout and operation-timeout together (the
  // one libcurl timeout covers connecting, sending and receiving).
  Clock::time_point deadline() const {
    return Clock::now() +
           std::chrono::milliseconds(call_ms(int64_t{config_.connect_timeout_ms} + config_.operation_timeout_ms));
  }

  RemoteFailure too_large(const char* method, std::optional<uint64_t> declared) {
    std::string size = declared ? fmt::format("{} bytes, more", *declared) : "more";
    return {RemoteFailure::Kind::Error,
            fmt::format("{}: the value is {} than max-entry-size ({} bytes)", method, size,
                        config_.max_entry_bytes)};
  }

  static RemoteFailure http_failure(const char* method, long status) {
    std::string why = status == 401 || status == 403 ? " (wrong or missing credentials?)" : "";
    return {RemoteFailure::Kind::Error, fmt::format("{}: HTTP status {}{}", method, status, why)};
  }

  // One request on the kept connection; the HTTP status, or why there is none.
  RemoteResult<long> perform(const char* method, const std::string& target, Body* body,
                             Upload* upload, Clock::time_point until) {
    const CurlApi& api = CurlApi::get();
    if (!api.problem.empty()) return RemoteFailure{RemoteFailure::Kind::Error, api.problem};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0)
      return RemoteFailure{RemoteFailure::Kind::Timeout, fmt::format("{}: no time left for it", method)};
    if (!curl_) {
      curl_ = api.easy_init();
      if (!curl_) return RemoteFailure{RemoteFailure::Kind::Error, "curl_easy_init failed"};
      headers_ = api.slist_append(headers_, "Content-Type: application/octet-stream");
      headers_ = api.slist_append(headers_, "Expect:");  // no 100-continue round trip
      if (!config_.bearer_token.empty())
        headers_ = api.slist_append(
            headers_, ("Authorization: Bearer " + config_.bearer_token).c_str());
    } else {
      api.easy_reset(curl_);  // keeps the connection
    }
    CURL* c = curl_;
    api.easy_setopt(c, CURLOPT_URL, target.c_str());
    api.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.connect_timeout_ms));
    // The connect timeout covers resolving the name, but at the end of a
    // transfer libcurl (7.87+) joins a resolver thread that is still blocked
    // in getaddrinfo unless told to leave it: without this a DNS server that
    // never answers costs the resolver's own timeouts after all.
    api.easy_setopt(c, CURLOPT_QUICK_EXIT, 1L);
    api.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(left));  // the whole request
    api.easy_setopt(c, CURLOPT_HTTPHEADER, headers_);
    api.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    // A private CA (ca-file): trusted instead of the system's certificates.
    // Peer and host verification stay on (libcurl's defaults) either way.
    if (!config_.ca_file.empty()) api.easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
    if (config_.has_password || !config_.user.empty()) {
      api.easy_setopt(c, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
      api.easy_setopt(c, CURLOPT_USERNAME, config_.user.c_str());
      api.easy_setopt(c, CURLOPT_PASSWORD, config_.password.c_str());
    }
    if (body) {
      api.easy_setopt(c, CURLOPT_WRITEFUNCTION, &write_body);
      api.easy_setopt(c, CURLOPT_WRITEDATA, body);
      api.easy_setopt(c, CURLOPT_HEADERFUNCTION, &read_header);
      api.easy_setopt(c, CURLOPT_HEADERDATA, body);
    } else {
      api.easy_setopt(c, CURLOPT_WRITEFUNCTION, &discard_body);
    }
    if (std::string_view(method) == "HEAD") {
      api.easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (upload) {
      api.easy_setopt(c, CURLOPT_UPLOAD, 1L);
      api.easy_setopt(c, CURLOPT_READFUNCTION, &read_upload);
      api.easy_setopt(c, CURLOPT_READDATA, upload);
      api.easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(upload->data.size()));
    } else if (std::string_view(method) != "GET") {
      api.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    CURLcode rc = api.easy_perform(c);
    if (body && body->too_large) return too_large(method, body->declared);
    if (rc != CURLE_OK) {
      RemoteFailure f;
      f.kind = rc == CURLE_OPERATION_TIMEDOUT ? RemoteFailure::Kind::Timeout
                                              : RemoteFailure::Kind::Error;
      f.message = fmt::format("{}: {}", method, api.easy_strerror(rc));
      return f;
    }
    long status = 0;
    api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return status;
  }

  RemoteConfig config_;
  std::string base_;
  CURL* curl_ = nullptr;
  curl_slist* headers_ = nullptr;
};

}  // namespace

// http(s)://[USER[:PASSWORD]@]HOST[:PORT][/PREFIX]: layout and bearer-token,
// and for https ca-file.
std::vector<RemoteScheme> http_schemes() {
  RemoteScheme http;
  http.prefix = "http://";
  http.usage = "http://HOST[:PORT]/PREFIX";
  http.parse_url = [](std::string_view rest, RemoteConfig& c) -> UrlProblem {
    c.scheme = RemoteConfig::Scheme::Http;
    std::string_view path;
    if (auto problem = parse_remote_authority(rest, c, false, path)) return problem;
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    c.path = std::string(path);
    return std::nullopt;
  };
  http.attributes = {"layout", "bearer-token"};
  http.secret_attributes = {"bearer-token"};
  http.parse_attribute = [](std::string_view name, std::string_view value,
                            RemoteConfig& c) -> UrlProblem {
    if (name == "layout") {
      if (value == "subdirs") c.layout = RemoteConfig::Layout::Subdirs;
      else if (value == "flat") c.layout = RemoteConfig::Layout::Flat;
      else if (value == "bazel") c.layout = RemoteConfig::Layout::Bazel;
      else return "layout is subdirs, flat or bazel";
    } else if (name == "bearer-token") {
      if (value.empty()) return "bearer-token wants a token or ${VARIABLE}";
      c.bearer_token = expand_remote_value(value, c);
    } else if (name == "ca-file") {
      if (value.empty()) return "ca-file wants the path of a PEM file of CA certificates";
      c.ca_file = expand_remote_value(value, c, false);
      // Unreadable: skipped with one warning (a remote never fails a build).
      if (!c.ca_file.empty() && ::access(c.ca_file.c_str(), R_OK) != 0 && c.unusable.empty())
        c.unusable = fmt::format("its ca-file {} cannot be read ({})", c.ca_file, std::strerror(errno));
    }
    return std::nullopt;
  };
  http.display = [](const RemoteConfig& c) {
    return (c.scheme == RemoteConfig::Scheme::Https ? "https://" : "http://") +
           display_remote_authority(c) + c.path;
  };
  http.create = make_http_backend;

  RemoteScheme https = http;
  https.prefix = "https://";
  https.usage = "https://...";
  https.parse_url = [http_url = http.parse_url](std::string_view rest, RemoteConfig& c) -> UrlProblem {
    auto problem = http_url(rest, c);
    c.scheme = RemoteConfig::Scheme::Https;
    return problem;
  };
  https.attributes.push_back("ca-file");
  return {http, https};
}

std::unique_ptr<RemoteBackend> make_http_backend(const RemoteConfig& config) {
  return std::make_unique<HttpBackend>(config);
}

}  // namespace ob::storage
