// Private servers for remote storage tests: redis-server and nginx (WebDAV,
// optionally over TLS with a self-signed certificate made here) on 127.0.0.1
// with a free port (or a unix socket), in a temporary directory, stopped by
// their PID; and a listener that accepts connections and never answers.
// Nothing here touches any other address.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ob::test {

// A port nothing listens on now (bound, read, released).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("free_port: cannot bind 127.0.0.1:0");
  ::close(fd);
  return ntohs(a.sin_port);
}

inline bool can_connect_tcp(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

inline bool can_connect_unix(const std::filesystem::path& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// A child process started from argv, output to `log`, stopped (SIGTERM, then
// waited for) when this object goes.
class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const std::vector<std::string>& argv, const std::filesystem::path& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ServerProcess(ServerProcess&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
  ServerProcess& operator=(ServerProcess&& o) noexcept {
    stop();
    pid_ = o.pid_;
    o.pid_ = -1;
    return *this;
  }
  ~ServerProcess() { stop(); }
  pid_t pid() const { return pid_; }
  bool running() const {
    if (pid_ <= 0) return false;
    if (::waitpid(pid_, nullptr, WNOHANG) == 0) return true;
    pid_ = -1;  // exited and reaped
    return false;
  }
  void stop(int sig = SIGTERM) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  mutable pid_t pid_ = -1;
};

// Wait (up to a generous bound: readiness, not a timing assertion) until `ready`.
template <class F>
bool wait_until(F ready, const ServerProcess& process) {
  for (int i = 0; i < 1000; ++i) {
    if (ready()) return true;
    if (!process.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// redis-server on 127.0.0.1:port, or on a unix socket only.
class RedisServer {
 public:
  struct Options {
    bool unix_socket = false;
    std::string password;
  };
  RedisServer(const std::filesystem::path& dir, Options o) : dir_(dir) {
    std::filesystem::create_directories(dir);
    std::vector<std::string> argv{"/usr/bin/redis-server", "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no", "--dir", dir.string()};
    if (o.unix_socket) {
      socket_ = dir / "redis.sock";
      argv.insert(argv.end(), {"--port", "0", "--unixsocket", socket_.string()});
    } else {
      port_ = free_port();
      argv.insert(argv.end(), {"--port", std::to_string(port_)});
    }
    if (!o.password.empty()) argv.insert(argv.end(), {"--requirepass", o.password});
    process_ = ServerProcess(argv, dir / "redis.log");
    bool up = wait_until(
        [&] { return o.unix_socket ? can_connect_unix(socket_) : can_connect_tcp(port_); }, process_);
    if (!up) throw std::runtime_error("redis-server did not start; see " + (dir / "redis.log").string());
  }
  int port() const { return port_; }
  const std::filesystem::path& socket() const { return socket_; }
  ServerProcess& process() { return process_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path socket_;
  int port_ = 0;
  ServerProcess process_;
};

// A self-signed certificate for 127.0.0.1 (its own CA: what `ca-file` must
// name to trust it) and its key, written as PEM into `dir` by the OpenSSL
// library (no openssl program needed). Valid from an hour ago for a day.
struct Certificate {
  std::filesystem::path cert, key;
};

inline Certificate make_self_signed_certificate(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  Certificate out{dir / "ca.pem", dir / "key.pem"};
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  bool ok = key && x && X509_set_version(x, 2) &&
            ASN1_INTEGER_set(X509_get_serialNumber(x), 1) &&
            X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
            X509_gmtime_adj(X509_getm_notAfter(x), 86400) && X509_set_pubkey(x, key);
  X509_NAME* name = x ? X509_get_subject_name(x) : nullptr;
  ok = ok && X509_NAME_add_entry_by_txt(
                 name, "CN", MBSTRING_ASC,
                 reinterpret_cast<const unsigned char*>("offload-build test CA"), -1, -1, 0) &&
       X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE"},
                            std::pair{NID_subject_alt_name, "IP:127.0.0.1"}}) {
    X509_EXTENSION* ext = ok ? X509V3_EXT_conf_nid(nullptr, &ctx, nid, value) : nullptr;
    ok = ext && X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  ok = ok && X509_sign(x, key, EVP_sha256()) > 0;
  FILE* c = ok ? std::fopen(out.cert.c_str(), "w") : nullptr;
  ok = c && PEM_write_X509(c, x);
  if (c) std::fclose(c);
  FILE* k = ok ? std::fopen(out.key.c_str(), "w") : nullptr;
  ok = k && PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr);
  if (k) std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(key);
  if (!ok) throw std::runtime_error("cannot make a self-signed certificate in " + dir.string());
  return out;
}

// nginx serving `root()` over WebDAV (GET, PUT, DELETE) on 127.0.0.1:port;
// over TLS when given a certificate.
class NginxServer {
 public:
  explicit NginxServer(const std::filesystem::path& dir, std::string extra_location = {},
                       const Certificate* tls = nullptr)
      : dir_(dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir / "root");
    fs::create_directories(dir / "tmp");
    fs::create_directories(dir / "logs");
    port_ = free_port();
    std::ofstream conf(dir / "nginx.conf");
    // Started as root, nginx runs its workers as another user unless told:
    // as root, the served tree stays ours. Not root: the directive is ignored.
    if (::geteuid() == 0) conf << "user root;\n";
    conf << "daemon off;\nworker_processes 1;\npid " << (dir / "nginx.pid").string() << ";\n"
         << "error_log " << (dir / "logs/error.log").string() << ";\n"
         << "events { worker_connections 64; }\n"
         << "http {\n  access_log off;\n"
         << "  client_body_temp_path " << (dir / "tmp/body").string() << ";\n"
         << "  proxy_temp_path " << (dir / "tmp/proxy").string() << ";\n"
         << "  fastcgi_temp_path " << (dir / "tmp/fastcgi").string() << ";\n"
         << "  uwsgi_temp_path " << (dir / "tmp/uwsgi").string() << ";\n"
         << "  scgi_temp_path " << (dir / "tmp/scgi").string() << ";\n"
         << "  client_max_body_size 0;\n"
         << "  server {\n    listen 127.0.0.1:" << port_ << (tls ? " ssl" : "") << ";\n";
    if (tls)
      conf << "    ssl_certificate " << tls->cert.string() << ";\n    ssl_certificate_key "
           << tls->key.string() << ";\n";
    conf
         << "    root " << (dir / "root").string() << ";\n"
         << "    location / {\n      dav_methods PUT DELETE;\n      create_full_put_path on;\n"
         << "      " << extra_location << "\n    }\n  }\n}\n";
    conf.close();
    process_ = ServerProcess({"/usr/sbin/nginx", "-p", dir.string(), "-c",
                              (dir / "nginx.conf").string()},
                             dir / "logs/stderr.log");
    if (!wait_until([&] { return can_connect_tcp(port_); }, process_))
      throw std::runtime_error("nginx did not start; see " + (dir / "logs").string());
  }
  int port() const { return port_; }
  std::filesystem::path root() const { return dir_ / "root"; }
  ServerProcess& process() { return process_; }

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  ServerProcess process_;
};

// A socket listening on 127.0.0.1 at a free port (set in `port`), for `who`.
inline int listen_on_loopback(int& port, const char* who) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(fd, 64) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error(std::string(who) + ": cannot listen on 127.0.0.1");
  port = ntohs(a.sin_port);
  return fd;
}

// Accepts connections (the kernel completes the handshake) and never answers.
class BlackHole {
 public:
  BlackHole() { fd_ = listen_on_loopback(port_, "BlackHole"); }
  ~BlackHole() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace ob::test
