// A scripted HTTP/1.1 server on loopback for the S3 client's unit tests, and the helpers the
// tests share (an S3 error body, a client for the server, credential and listing documents).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "impl/storage/s3/client.h"

namespace smd::s3 {

// A scripted HTTP/1.1 server on 127.0.0.1: each accepted connection serves one request with the
// next step of the script, then closes.
class ScriptedServer {
 public:
  enum class Act { kRespond, kReset, kTruncate, kStall };
  struct Step {
    Act act = Act::kRespond;
    int status = 200;
    std::string body;
    std::string extra_headers;
  };

  explicit ScriptedServer(std::vector<Step> script) : script_(std::move(script)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 16);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int served() const { return served_.load(); }
  std::string last_request() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_.empty() ? std::string() : requests_.back();
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  void Run() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0 || stop_) {
        if (c >= 0) close(c);
        return;
      }
      std::string req;
      char buf[65536];
      size_t need = std::string::npos;
      for (;;) {
        ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        req.append(buf, n);
        size_t head = req.find("\r\n\r\n");
        if (head != std::string::npos && need == std::string::npos) {
          size_t cl = req.find("Content-Length: ");
          size_t body_len = cl == std::string::npos || cl > head ? 0 : std::stoul(req.substr(cl + 16));
          need = head + 4 + body_len;
        }
        if (need != std::string::npos && req.size() >= need) break;
      }
      {
        std::lock_guard<std::mutex> l(mu_);
        requests_.push_back(req);
      }
      const int i = served_.fetch_add(1);
      Step s = i < static_cast<int>(script_.size()) ? script_[i] : script_.back();
      std::string resp = "HTTP/1.1 " + std::to_string(s.status) + " X\r\nConnection: close\r\n" +
                         s.extra_headers;
      switch (s.act) {
        case Act::kRespond:
          resp += "Content-Length: " + std::to_string(s.body.size()) + "\r\n\r\n" + s.body;
          send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
          break;
        case Act::kReset: {
          linger lg{1, 0};  // RST instead of FIN
          setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
          break;
        }
        case Act::kTruncate:
          resp += "Content-Length: " + std::to_string(s.body.size() + 100) + "\r\n\r\n" + s.body;
          send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
          break;
        case Act::kStall:
          resp += "Content-Length: 1000\r\n\r\n";
          send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
          // Say nothing more until the client gives up and closes.
          for (int k = 0; k < 100 && !stop_; ++k) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            char b;
            if (recv(c, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) break;
          }
          break;
      }
      close(c);
    }
  }

  std::vector<Step> script_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> served_{0};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

using Act = ScriptedServer::Act;

inline std::string ErrorXml(const std::string& code) {
  return "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>m-" + code +
         "</Message></Error>";
}

inline std::unique_ptr<Client> MakeClient(const std::string& endpoint, int attempts = 4) {
  Config cfg;
  cfg.endpoint = endpoint;
  cfg.credentials = {"AKIDTEST", "TOP-SECRET-KEY", "SESSION-TOKEN-XYZ"};
  cfg.max_attempts = attempts;
  cfg.backoff_base_ms = 5;
  cfg.backoff_cap_ms = 20;
  cfg.stall_timeout_ms = 1000;
  auto c = Client::Create(cfg);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::move(c).value();
}

inline std::string CredsJson(const std::string& id, const std::string& token, long expires_in_s) {
  std::time_t t = std::time(nullptr) + expires_in_s;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char exp[32];
  std::strftime(exp, sizeof exp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return "{\"AccessKeyId\":\"" + id + "\",\"SecretAccessKey\":\"SECRET-" + id +
         "\",\"Token\":\"" + token + "\",\"Expiration\":\"" + exp + "\"}";
}

inline std::string ListXml(int n, bool with_count = true) {
  std::string x = "<?xml version=\"1.0\"?><ListBucketResult><Name>bucket</Name>";
  for (int i = 0; i < n; ++i)
    x += "<Contents><Key>p/k" + std::to_string(i) + "</Key><Size>1</Size></Contents>";
  if (with_count) x += "<KeyCount>" + std::to_string(n) + "</KeyCount>";
  return x + "<IsTruncated>false</IsTruncated></ListBucketResult>";
}

}  // namespace smd::s3
