// A fault-injecting HTTP proxy on 127.0.0.1 for the S3 tests: it forwards each request to the
// real server (keep-alive on both sides, the request's bytes unchanged so its signature stays
// valid) and, as the test's script decides per request, answers in its place or spoils the
// answer: an error reply (500, 503 SlowDown, 403 RequestTimeTooSkewed, 400 ExpiredToken, ...,
// given before or after the server saw the request), a connection reset in the middle of the
// body, a truncated answer (the connection closed early), a stalled connection (half the answer,
// then silence), a lost answer (the server applied the request, the client sees a reset), or a
// body cut short under a Content-Length that matches the cut (a listing that looks complete).
// Without an upstream it serves only scripted replies (a credentials endpoint, for instance).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace smd::s3::testing {

struct ProxyRequest {
  std::string method;
  std::string target;  // "/bucket/key?query", as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string head;  // the request line and headers, raw
  std::string body;

  // The value of header `name` (any case), or "".
  std::string Header(const std::string& name) const {
    for (const auto& [n, v] : headers)
      if (strcasecmp(n.c_str(), name.c_str()) == 0) return v;
    return "";
  }
  // The path without the query.
  std::string Path() const { return target.substr(0, target.find('?')); }
  std::string Query() const {
    size_t q = target.find('?');
    return q == std::string::npos ? "" : target.substr(q + 1);
  }
};

struct Fault {
  enum class Kind {
    kNone,          // forward, answer as the server did
    kReply,         // answer `status` with an S3 error body of `code` (or `body`)
    kResetMidBody,  // send part of the answer, then reset the connection (RST)
    kTruncate,      // send the head and part of the body, then close (FIN)
    kStall,         // send part of the answer, then nothing for stall_ms, then close
    kLoseAnswer,    // (the server got the request) reset before any byte of the answer
    kCutBody,       // the body cut short, with a Content-Length that matches the cut (the
                    // transfer looks complete; only the content can tell), keep-alive
  };
  Kind kind = Kind::kNone;
  bool forward = true;  // kReply: let the server apply the request first
  int status = 0;
  std::string code;  // S3 error code of a kReply
  std::string body;  // kReply with no code: this body
  std::vector<std::pair<std::string, std::string>> headers;  // extra reply headers
  int stall_ms = 3000;
  double cut_at = 0.5;  // kCutBody: the fraction of the body kept

  static Fault None() { return Fault(); }
  static Fault Reply(int status, std::string code, bool forward = false) {
    Fault f;
    f.kind = Kind::kReply;
    f.status = status;
    f.code = std::move(code);
    f.forward = forward;
    return f;
  }
  static Fault Of(Kind k) {
    Fault f;
    f.kind = k;
    return f;
  }
};

// Decides the fault of each request; `index` counts requests from 0. Called from several
// connection threads at once: the script locks what it shares.
using ProxyScript = std::function<Fault(const ProxyRequest& req, int index)>;

inline std::string HttpDate(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

class FaultProxy {
 public:
  // upstream_port 0: no server behind; every answer must be a kReply with forward=false.
  explicit FaultProxy(int upstream_port) : upstream_port_(upstream_port) {}
  ~FaultProxy() { Stop(); }
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // "http://127.0.0.1:PORT" -> PORT, or 0.
  static int PortOf(const std::string& endpoint) {
    size_t colon = endpoint.rfind(':');
    return colon == std::string::npos ? 0 : std::atoi(endpoint.c_str() + colon + 1);
  }

  bool Start() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0) return false;
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return false;
    if (::listen(listen_fd_, 64) != 0) return false;
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
    return true;
  }

  void Stop() {
    if (stopping_.exchange(true)) return;
    if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    {
      std::lock_guard<std::mutex> l(mu_);
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    std::vector<std::thread> ts;
    {
      std::lock_guard<std::mutex> l(mu_);
      ts.swap(conns_);
    }
    for (auto& t : ts) t.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
  }

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void SetScript(ProxyScript s) {
    std::lock_guard<std::mutex> l(mu_);
    script_ = std::move(s);
  }
  int requests() const { return n_requests_.load(); }
  int faults() const { return n_faults_.load(); }
  // The requests seen, "METHOD target" each, in arrival order.
  std::vector<std::string> log() const {
    std::lock_guard<std::mutex> l(mu_);
    return log_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) {
        if (stopping_.load()) return;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_.load()) {
        ::close(fd);
        return;
      }
      open_fds_.insert(fd);
      conns_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Track(int fd) {
    std::lock_guard<std::mutex> l(mu_);
    open_fds_.insert(fd);
    if (stopping_.load()) ::shutdown(fd, SHUT_RDWR);
  }
  void Close(int fd, bool reset) {
    if (fd < 0) return;
    {
      std::lock_guard<std::mutex> l(mu_);
      open_fds_.erase(fd);
    }
    if (reset) {
      linger lg{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    ::close(fd);
  }

  static bool SendAll(int fd, std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Reads more bytes into *buf; false at EOF or error.
  static bool Fill(int fd, std::string* buf) {
    char tmp[65536];
    for (;;) {
      ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buf->append(tmp, static_cast<size_t>(n));
      return true;
    }
  }
  // Takes the head (up to and with the blank line) off *buf.
  static bool ReadHead(int fd, std::string* buf, std::string* head) {
    size_t end;
    while ((end = buf->find("\r\n\r\n")) == std::string::npos)
      if (!Fill(fd, buf)) return false;
    *head = buf->substr(0, end + 4);
    buf->erase(0, end + 4);
    return true;
  }
  static bool ReadN(int fd, std::string* buf, size_t n, std::string* out) {
    while (buf->size() < n)
      if (!Fill(fd, buf)) return false;
    *out = buf->substr(0, n);
    buf->erase(0, n);
    return true;
  }
  static bool ReadLine(int fd, std::string* buf, std::string* line) {
    size_t end;
    while ((end = buf->find("\r\n")) == std::string::npos)
      if (!Fill(fd, buf)) return false;
    *line = buf->substr(0, end);
    buf->erase(0, end + 2);
    return true;
  }
  static std::vector<std::pair<std::string, std::string>> ParseHeaders(const std::string& head,
                                                                       std::string* first) {
    std::vector<std::pair<std::string, std::string>> out;
    size_t pos = head.find("\r\n");
    *first = head.substr(0, pos);
    pos += 2;
    for (size_t e; (e = head.find("\r\n", pos)) != std::string::npos && e > pos; pos = e + 2) {
      std::string line = head.substr(pos, e - pos);
      size_t c = line.find(':');
      if (c == std::string::npos) continue;
      size_t v = line.find_first_not_of(' ', c + 1);
      out.emplace_back(line.substr(0, c), v == std::string::npos ? "" : line.substr(v));
    }
    return out;
  }
  static std::string Get(const std::vector<std::pair<std::string, std::string>>& h,
                         const char* name) {
    for (const auto& [n, v] : h)
      if (strcasecmp(n.c_str(), name) == 0) return v;
    return "";
  }

  // The server's answer, re-framed with a Content-Length. False if the server went away.
  struct Answer {
    std::string head, body;
    bool close = false;
  };
  static bool ReadAnswer(int fd, std::string* buf, bool head_request, Answer* a) {
    std::string raw_head, first;
    if (!ReadHead(fd, buf, &raw_head)) return false;
    auto h = ParseHeaders(raw_head, &first);
    int status = std::atoi(first.c_str() + std::min<size_t>(9, first.size()));
    a->close = strcasecmp(Get(h, "Connection").c_str(), "close") == 0;
    const bool no_body = head_request || status == 204 || status == 304 || status / 100 == 1;
    if (!no_body) {
      if (strcasecmp(Get(h, "Transfer-Encoding").c_str(), "chunked") == 0) {
        for (;;) {
          std::string line, chunk;
          if (!ReadLine(fd, buf, &line)) return false;
          size_t n = std::strtoul(line.c_str(), nullptr, 16);
          if (n == 0) {
            while (ReadLine(fd, buf, &line) && !line.empty()) {
            }
            break;
          }
          if (!ReadN(fd, buf, n, &chunk) || !ReadLine(fd, buf, &line)) return false;
          a->body += chunk;
        }
      } else if (std::string cl = Get(h, "Content-Length"); !cl.empty()) {
        if (!ReadN(fd, buf, std::strtoull(cl.c_str(), nullptr, 10), &a->body)) return false;
      } else {
        while (Fill(fd, buf)) {
        }
        a->body.swap(*buf);
        a->close = true;
      }
    }
    a->head = first + "\r\n";
    for (const auto& [n, v] : h) {
      if (strcasecmp(n.c_str(), "Transfer-Encoding") == 0) continue;
      if (!head_request && strcasecmp(n.c_str(), "Content-Length") == 0) continue;
      a->head += n + ": " + v + "\r\n";
    }
    if (!head_request) a->head += "Content-Length: " + std::to_string(a->body.size()) + "\r\n";
    a->head += "\r\n";
    return true;
  }

  static Answer MakeReply(const Fault& f) {
    Answer a;
    a.body = f.body;
    if (!f.code.empty())
      a.body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + f.code +
               "</Code><Message>injected by the test proxy</Message></Error>";
    a.head = "HTTP/1.1 " + std::to_string(f.status) + " Injected\r\n";
    bool has_date = false;
    for (const auto& [n, v] : f.headers) {
      a.head += n + ": " + v + "\r\n";
      if (strcasecmp(n.c_str(), "Date") == 0) has_date = true;
    }
    if (!has_date) a.head += "Date: " + HttpDate(std::time(nullptr)) + "\r\n";
    a.head += "Content-Type: application/xml\r\nContent-Length: " + std::to_string(a.body.size()) +
              "\r\n\r\n";
    return a;
  }

  int ConnectUpstream() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(upstream_port_));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      return -1;
    }
    Track(fd);
    return fd;
  }

  void Serve(int cfd) {
    std::string cbuf, ubuf;
    int ufd = -1;
    bool reset = false;
    for (;;) {
      ProxyRequest req;
      std::string first;
      if (!ReadHead(cfd, &cbuf, &req.head)) break;
      req.headers = ParseHeaders(req.head, &first);
      size_t sp1 = first.find(' '), sp2 = first.rfind(' ');
      req.method = first.substr(0, sp1);
      req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
      std::string cl = req.Header("Content-Length");
      if (!cl.empty() && !ReadN(cfd, &cbuf, std::strtoull(cl.c_str(), nullptr, 10), &req.body))
        break;
      const int index = n_requests_++;
      ProxyScript script;
      {
        std::lock_guard<std::mutex> l(mu_);
        log_.push_back(req.method + " " + req.target);
        script = script_;
      }
      Fault f = script ? script(req, index) : Fault::None();
      if (f.kind != Fault::Kind::kNone) ++n_faults_;
      Answer a;
      if (f.kind == Fault::Kind::kReply && !f.forward) {
        a = MakeReply(f);
      } else if (upstream_port_ == 0) {
        a = MakeReply(Fault::Reply(502, "NoUpstream"));
      } else {
        if (ufd < 0) ufd = ConnectUpstream();
        bool ok = ufd >= 0 && SendAll(ufd, req.head) && SendAll(ufd, req.body) &&
                  ReadAnswer(ufd, &ubuf, req.method == "HEAD", &a);
        if (!ok || a.close) {
          Close(ufd, false);
          ufd = -1;
          ubuf.clear();
        }
        if (!ok) {
          reset = true;
          break;
        }
        if (f.kind == Fault::Kind::kReply) a = MakeReply(f);
      }
      const std::string all = a.head + a.body;
      const std::string half_body = a.head + a.body.substr(0, a.body.size() / 2);
      const std::string& part = a.body.empty() ? all.substr(0, a.head.size() / 2) : half_body;
      switch (f.kind) {
        case Fault::Kind::kNone:
        case Fault::Kind::kReply:
          if (!SendAll(cfd, all)) reset = true;
          break;
        case Fault::Kind::kCutBody: {
          size_t keep = static_cast<size_t>(static_cast<double>(a.body.size()) * f.cut_at);
          if (keep >= a.body.size() && !a.body.empty()) keep = a.body.size() - 1;
          std::string head = a.head;
          const size_t cl = head.rfind("Content-Length: ");
          if (cl != std::string::npos) {
            const size_t eol = head.find("\r\n", cl);
            head.replace(cl, eol - cl, "Content-Length: " + std::to_string(keep));
          }
          if (!SendAll(cfd, head + a.body.substr(0, keep))) reset = true;
          break;
        }
        case Fault::Kind::kResetMidBody:
          SendAll(cfd, part);
          reset = true;
          break;
        case Fault::Kind::kTruncate:
          SendAll(cfd, part);
          break;
        case Fault::Kind::kStall: {
          SendAll(cfd, part);
          auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(f.stall_ms);
          while (!stopping_.load() && std::chrono::steady_clock::now() < until) {
            pollfd p{cfd, POLLIN, 0};
            if (::poll(&p, 1, 50) > 0) break;  // the client gave up and closed
          }
          break;
        }
        case Fault::Kind::kLoseAnswer:
          reset = true;
          break;
      }
      if (reset || f.kind == Fault::Kind::kTruncate || f.kind == Fault::Kind::kStall) break;
      if (a.close) break;
    }
    Close(ufd, false);
    Close(cfd, reset);
  }

  const int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<std::thread> conns_;
  std::set<int> open_fds_;
  ProxyScript script_;
  std::vector<std::string> log_;
  std::atomic<int> n_requests_{0}, n_faults_{0};
};

}  // namespace smd::s3::testing
