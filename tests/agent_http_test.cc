// Issue 32 item 7: the agent's HTTP server (`tfdiag attach --serve`) under hostile clients, and
// its liveness endpoint. Before, civetweb ran 4 worker threads with a 10 s request timeout: 100
// idle connections or 8 clients trickling a header byte every few seconds held every worker, and
// a scrape waited until they gave up; PUT, DELETE and POST on /metrics answered 200; nothing told
// a liveness probe that the sampler had stopped while /metrics served its last figures.
// All against the real binary on 127.0.0.1, with real sockets; the stalled sampler is the
// agent's main thread (the sampling loop) stopped with ptrace while its HTTP threads run on.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/agent_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Sends `request` and reads the reply until the server closes or `timeout_s` passes.
struct Reply {
  std::string text;  // "" when nothing came back in time
  double seconds = 0;
  bool closed = false;  // the server ended the connection
};
Reply Exchange(int port, const std::string& request, double timeout_s = 5) {
  Reply r;
  const auto t0 = Clock::now();
  const int fd = ConnectLoopback(port);
  if (fd < 0) return r;
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return r;
  }
  char buf[65536];
  while (Since(t0) < timeout_s) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    r.text.append(buf, n);
  }
  close(fd);
  r.seconds = Since(t0);
  return r;
}

// "405 Method Not Allowed" from "HTTP/1.x 405 Method Not Allowed\r\n..." (civetweb answers in
// the request's HTTP version); "" when there is no status line.
std::string HttpStatus(const std::string& reply) {
  if (reply.rfind("HTTP/1.", 0) != 0 || reply.size() < 9) return "";
  return reply.substr(9, reply.find('\r') - 9);
}

std::string Body(const std::string& reply) {
  const size_t p = reply.find("\r\n\r\n");
  return p == std::string::npos ? "" : reply.substr(p + 4);
}

// The agent: `tfdiag attach --serve 127.0.0.1:PORT` without eBPF, sampling every 200 ms; killed
// and reaped when this goes away.
class Agent {
 public:
  explicit Agent(const std::vector<std::string>& extra = {}) : port_(FreePorts(1)[0]) {
    std::vector<std::string> all = {
        "attach",   "--no-bpf", "--interval", "200ms",
        "--rescan", "1s",       "--serve",    "127.0.0.1:" + std::to_string(port_)};
    all.insert(all.end(), extra.begin(), extra.end());
    pid_ = SpawnTfdiagChild(all, log_);
    for (int i = 0; i < 100 && pid_ > 0; ++i) {  // up within 10 s
      if (HttpStatus(Exchange(port_, "GET / HTTP/1.0\r\n\r\n", 1).text) == "200 OK") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~Agent() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const { return ReadFile(log_); }

 private:
  TempDir tmp_;
  std::string log_ = tmp_.File("agent.err");
  int port_;
  pid_t pid_ = -1;
};

TEST(AgentHttp, OnlyGetAndHeadAreServedOthersGet405WithAllow) {
  Agent agent;
  ASSERT_GT(agent.pid(), 0);
  const int port = agent.port();
  const Reply get = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(HttpStatus(get.text), "200 OK") << get.text << agent.log();
  for (const char* method : {"PUT", "DELETE", "POST", "PATCH", "OPTIONS"}) {
    for (const char* path : {"/metrics", "/", "/healthz"}) {
      const Reply r = Exchange(port, std::string(method) + " " + path +
                                         " HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc");
      EXPECT_EQ(HttpStatus(r.text), "405 Method Not Allowed") << method << " " << path;
      EXPECT_NE(r.text.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << r.text;
    }
  }
  // HEAD: the headers of GET (its length), no body.
  const Reply head = Exchange(port, "HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(HttpStatus(head.text), "200 OK") << head.text;
  EXPECT_NE(head.text.find("Content-Length: "), std::string::npos) << head.text;
  EXPECT_EQ(Body(head.text), "") << head.text;
  const Reply head_root = Exchange(port, "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(HttpStatus(head_root.text), "200 OK");
  EXPECT_EQ(Body(head_root.text), "");
  EXPECT_NE(Body(Exchange(port, "GET / HTTP/1.0\r\n\r\n").text).find("/healthz"),
            std::string::npos);
  EXPECT_EQ(HttpStatus(Exchange(port, "GET /nothing HTTP/1.0\r\n\r\n").text), "404 Not Found");
}

// 100 connections that never send a byte and 8 that send a request header one byte every 2 s
// (slowloris): scrapes beside them answer within 2 s, again and again, and the server ends the
// slow ones itself (bounded time per connection).
TEST(AgentHttp, ScrapesAnswerBeside100IdleAnd8SlowClients) {
  Agent agent;
  ASSERT_GT(agent.pid(), 0);
  const int port = agent.port();
  ASSERT_EQ(HttpStatus(Exchange(port, "GET /metrics HTTP/1.0\r\n\r\n").text), "200 OK")
      << agent.log();
  // The slow clients connect first: their clocks below start at connect, and the server's
  // request timeout starts when a worker takes the connection, so they must not wait behind
  // the idle ones in the kernel's accept queue.
  std::vector<int> idle, slow;
  for (int i = 0; i < 8; ++i) slow.push_back(ConnectLoopback(port));
  for (int i = 0; i < 100; ++i) idle.push_back(ConnectLoopback(port));
  ASSERT_EQ(std::count(idle.begin(), idle.end(), -1), 0);
  ASSERT_EQ(std::count(slow.begin(), slow.end(), -1), 0);
  std::atomic<bool> stop{false};
  std::vector<double> cut_after(slow.size(), -1);  // when the server ended each slow client
  std::thread trickle([&] {
    const std::string header = "GET /metrics HTTP/1.1\r\nHost: a\r\nX-Slow: ";
    const auto t0 = Clock::now();
    // A byte every 2 s from each; every 50 ms a look for the server's FIN (or reset).
    for (size_t tick = 0; !stop.load(); ++tick) {
      for (size_t k = 0; k < slow.size(); ++k) {
        if (cut_after[k] >= 0) continue;
        pollfd p{slow[k], POLLIN | POLLRDHUP, 0};
        char b;
        if (poll(&p, 1, 0) > 0 && recv(slow[k], &b, 1, MSG_DONTWAIT) <= 0) {
          cut_after[k] = Since(t0);
          continue;
        }
        const size_t i = tick / 40;
        const char c = i < header.size() ? header[i] : 'x';
        if (tick % 40 == 0 && send(slow[k], &c, 1, MSG_NOSIGNAL) != 1) cut_after[k] = Since(t0);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // all accepted by now
  double worst = 0;
  for (int round = 0; round < 6; ++round) {
    const Reply r = Exchange(port, "GET /metrics HTTP/1.0\r\n\r\n", 5);
    EXPECT_EQ(HttpStatus(r.text), "200 OK") << "scrape " << round << " after " << r.seconds << " s";
    EXPECT_LT(r.seconds, 2.0) << "scrape " << round;
    worst = std::max(worst, r.seconds);
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // By now (about 7 s in) each slow client has been cut off by the server's request timeout.
  for (int w = 0; w < 100 && std::count(cut_after.begin(), cut_after.end(), -1.0) > 0; ++w)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop.store(true);
  trickle.join();
  std::printf("[ measured ] 100 idle + 8 slow clients: slowest of 6 scrapes %.3f s\n", worst);
  for (size_t k = 0; k < slow.size(); ++k) {
    EXPECT_GE(cut_after[k], 0) << "slow client " << k << " still connected after ~17 s";
    std::printf("[ measured ] slow client %zu cut by the server after %.2f s\n", k, cut_after[k]);
    // The server (report/metrics_server.h) ends a connection whose request is not whole 2 s
    // after its accept (checked every 100 ms); civetweb, before, allowed up to 4 s, and 6.02 s
    // was seen once in CI for a connection accepted late on a loaded host; the configuration
    // before that (10 s timeout, 4 workers) kept such a client for 10 s or more.
    EXPECT_LT(cut_after[k], 6.5) << "slow client " << k << "\n" << agent.log();
  }
  // The idle ones were closed too: reading gives EOF (or a reset), not a wait.
  int idle_closed = 0;
  for (int fd : idle) {
    pollfd p{fd, POLLIN, 0};
    char b;
    if (poll(&p, 1, 0) > 0 && recv(fd, &b, 1, MSG_DONTWAIT) <= 0) ++idle_closed;
    close(fd);
  }
  for (int fd : slow) close(fd);
  EXPECT_EQ(idle_closed, 100);
  EXPECT_EQ(kill(agent.pid(), 0), 0) << "the agent died: " << agent.log();
}

// /healthz answers 200 while sampling rounds complete and 503 once none has for --stale-after;
// /metrics keeps answering (with the last figures) meanwhile, so only /healthz can tell.
TEST(AgentHttp, HealthzTurns503WhenTheSamplingLoopStalls) {
  Agent agent({"--stale-after", "1s"});
  ASSERT_GT(agent.pid(), 0);
  const int port = agent.port();
  const Reply ok = Exchange(port, "GET /healthz HTTP/1.0\r\n\r\n");
  ASSERT_EQ(HttpStatus(ok.text), "200 OK") << ok.text << agent.log();
  EXPECT_EQ(Body(ok.text).rfind("ok", 0), 0u) << ok.text;
  // The sampling loop runs on the agent's main thread (tid = pid); stop that thread alone.
  if (ptrace(PTRACE_SEIZE, agent.pid(), nullptr, nullptr) != 0)
    GTEST_SKIP() << "cannot ptrace the agent (" << std::strerror(errno)
                 << "): no way to stall its sampling thread alone";
  ASSERT_EQ(ptrace(PTRACE_INTERRUPT, agent.pid(), nullptr, nullptr), 0) << std::strerror(errno);
  int st = 0;
  ASSERT_EQ(waitpid(agent.pid(), &st, __WALL), agent.pid());
  ASSERT_TRUE(WIFSTOPPED(st));
  std::this_thread::sleep_for(std::chrono::milliseconds(1800));
  const Reply stale = Exchange(port, "GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(HttpStatus(stale.text), "503 Service Unavailable") << stale.text;
  EXPECT_NE(Body(stale.text).find("no sampling round completed for"), std::string::npos)
      << stale.text;
  EXPECT_EQ(HttpStatus(Exchange(port, "HEAD /healthz HTTP/1.0\r\n\r\n").text),
            "503 Service Unavailable");
  EXPECT_EQ(HttpStatus(Exchange(port, "GET /metrics HTTP/1.0\r\n\r\n").text), "200 OK");
  ASSERT_EQ(ptrace(PTRACE_DETACH, agent.pid(), nullptr, nullptr), 0) << std::strerror(errno);
  // Back to 200 once a round completes: on a loaded machine a round took over the 3 s this
  // waited before (issue 47, beside two spinning processes); 30 s bound the wait now.
  std::string again;
  for (int i = 0; i < 300 && HttpStatus(again) != "200 OK"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    again = Exchange(port, "GET /healthz HTTP/1.0\r\n\r\n").text;
  }
  EXPECT_EQ(HttpStatus(again), "200 OK") << again;
}

TEST(AgentHttp, StaleAfterMustBeADuration) {
  RunResult r = RunTfdiag("attach --no-bpf --duration 1s --serve 127.0.0.1:0 --stale-after soon");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--stale-after soon: expected a positive duration"), std::string::npos)
      << r.err;
  r = RunTfdiag("attach --no-bpf --duration 1s -o /dev/null --stale-after 5s");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--stale-after 5s: only with --serve"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
