// `tfdiag analyze --prometheus` against a hostile Prometheus on 127.0.0.1 (issue 32, items 4, 5
// and 11): a server in a thread of the test, answering each query of the job's analysis with a
// well-formed job (two pods with CPU series and agent series) except for one bad reply. Each bad
// reply crashed tfdiag (SIGSEGV, SIGABRT), read as a phantom task or a wrong figure, or took a
// run of 27 timeouts; each must end in exit code 2 naming the cap or the series.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <thread>

#include "collectors/prometheus/prom_reply.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// "a%20b+c" -> "a b c" (application/x-www-form-urlencoded).
std::string FormDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// An HTTP/1.1 server on 127.0.0.1 (one connection at a time, each closed after its reply) whose
// replies come from `reply(path, query)`, `query` being the decoded PromQL of a POSTed form.
class HostileProm {
 public:
  using Reply = std::function<std::string(const std::string& path, const std::string& query)>;
  explicit HostileProm(Reply reply) : reply_(std::move(reply)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        listen(fd_, 16) != 0 || getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HostileProm() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      Handle(c);
      close(c);
    }
  }
  void Handle(int c) {
    std::string req;
    char buf[65536];
    size_t head_end = std::string::npos, want = 0;
    while (true) {
      const ssize_t n = recv(c, buf, sizeof(buf), 0);
      if (n <= 0) return;
      req.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos && (head_end = req.find("\r\n\r\n")) != std::string::npos) {
        const size_t cl = req.find("Content-Length: ");
        want = cl < head_end ? std::stoul(req.substr(cl + 16)) : 0;
      }
      if (head_end != std::string::npos && req.size() >= head_end + 4 + want) break;
    }
    ++requests_;
    const size_t sp = req.find(' ');
    const std::string path = req.substr(sp + 1, req.find(' ', sp + 1) - sp - 1);
    const std::string form = req.substr(head_end + 4);
    std::string query;
    if (form.rfind("query=", 0) == 0) query = FormDecode(form.substr(6, form.find('&') - 6));
    const std::string body = reply_(path, query);
    // A reply that starts with a status line is sent as it is (headers of the test's own).
    const std::string out =
        body.rfind("HTTP/1.1 ", 0) == 0
            ? body
            : "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    for (size_t sent = 0; sent < out.size();) {
      const ssize_t n = send(c, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the client stopped reading (a cap)
      sent += static_cast<size_t>(n);
    }
  }

  Reply reply_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

std::string Success(const std::string& type, const std::string& result) {
  return R"({"status":"success","data":{"resultType":")" + type + R"(","result":)" + result + "}}";
}

// The job's series: pods j-ps-0 and j-worker-0 (namespace n) found by their owner, CPU series
// over [1000, 1120] s, agent series; `bad(query)` replaces the reply of the queries it names
// (empty: the good reply).
std::string JobReply(const std::string& path, const std::string& q,
                     const std::function<std::string(const std::string&)>& bad) {
  if (std::string b = bad(path + " " + q); !b.empty()) return b;
  if (path == "/api/v1/status/buildinfo")
    return R"({"status":"success","data":{"version":"2.45.0"}})";
  const bool range = path == "/api/v1/query_range";
  if (q.find("created_by_name=\"j\"") != std::string::npos) {
    return Success(
        "vector",
        R"([{"metric":{"namespace":"n","pod":"j-ps-0","node":"a"},"value":[1120,"1"]},)"
        R"({"metric":{"namespace":"n","pod":"j-worker-0","node":"b"},"value":[1120,"1"]}])");
  }
  if (q.find("rate(container_cpu_usage_seconds_total") != std::string::npos) {
    std::string r;
    for (const char* pod : {"j-ps-0", "j-worker-0"}) {
      r += std::string(r.empty() ? "" : ",") + R"({"metric":{"pod":")" + pod +
           R"("},"values":[[1000,"0.5"],[1060,"0.5"],[1120,"0.5"]]})";
    }
    return Success("matrix", "[" + r + "]");
  }
  if (q.find("count by (pod, replica_type, replica_index)") != std::string::npos) {
    return Success("vector", R"([{"metric":{"pod":"j-worker-0"},"value":[1120,"1"]}])");
  }
  return Success(range ? "matrix" : "vector", "[]");
}

const char* const kArgs = " --job j --start 1000 --end 1120 --step 60s --no-progress";

RunResult Analyze(const HostileProm& server, const std::string& extra = "") {
  return RunTfdiag("analyze --prometheus " + server.url() + kArgs + extra);
}

// The control: the well-formed job is analysed (exit 0).
TEST(HostilePrometheus, WellFormedJobIsRead) {
  HostileProm server([](const std::string& p, const std::string& q) {
    return JobReply(p, q, [](const std::string&) { return std::string(); });
  });
  RunResult r = Analyze(server, " -f json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("j-worker-0"), std::string::npos) << r.out.substr(0, 2000);
}

// The reply reader (prom_reply.h, SAX): members in any order, unknown members skipped, a null
// value as NaN, a scalar result; each bad shape named.
TEST(PromReply, ReadsTheApiShapesAndNamesBadOnes) {
  auto parse = [](std::string text) { return ParsePromReply(text.data(), text.size(), "u", 10); };
  StatusOr<PromReply> r = parse(
      R"({"data":{"result":[{"values":[[1,"2"],[3,null]],"x":[{}],"metric":{"pod":"p","n":1}}],)"
      R"("resultType":"matrix"},"warnings":["w"],"status":"success"})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, "success");
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].Label("pod"), "p");
  EXPECT_EQ(r->series[0].labels.count("n"), 0u);
  ASSERT_EQ(r->series[0].points.size(), 2u);
  EXPECT_EQ(r->series[0].points[0], std::make_pair(1.0, 2.0));
  EXPECT_TRUE(std::isnan(r->series[0].points[1].second));
  r = parse(R"({"status":"success","data":{"resultType":"scalar","result":[5,"7"]}})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].points[0], std::make_pair(5.0, 7.0));
  r = parse(R"({"status":"error","error":"bad","errorType":"x"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error, "bad");
  EXPECT_FALSE(r->has_result);
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
           {R"({"data":{"result":[{"metric":{},"value":5}]}})",
            "u: data.result[0].value: expected [time"},
           {R"({"data":{"result":[{"metric":{},"values":[[1,"2",3]]}]}})",
            "u: data.result[0].values: expected [time"},
           {R"({"data":{"result":[{"value":[1,"2"]}]}})", "u: data.result[0].metric: expected"},
           {R"({"data":{"result":[{"metric":{}},[1]]}})", "u: data.result[1]: expected a series"},
           {R"({"data":{"result":[)" + std::string(11 * 14, ' ') + "]}}", ""},
           {R"({"data":{"resultType":"scalar","result":[-1,"7"]}})", "u: data.result: expected"},
           {R"({"data":{"result":[{"metric":{},"value":[1,"2"]}]})", "u: byte "},
           {std::string(R"({"status":"success"})") + '\0' + "x", "u: byte 20: a NUL byte"},
       }) {
    r = parse(text);
    if (expect.empty()) continue;
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message().rfind(expect, 0), 0u) << r.status().message();
  }
  std::string eleven;
  for (int i = 0; i < 11; ++i) eleven += std::string(i ? "," : "") + R"({"metric":{}})";
  r = parse(R"({"data":{"result":[)" + eleven + "]}}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "u: the reply has more than 10 series, the most tfdiag reads from one query");
}

// A window past 2096 (the flags allowed Unix seconds up to 3.25e10: x 1e9 overflowed int64 ns).
TEST(HostilePrometheus, WindowPastInt64NanosecondsIsExit2) {
  HostileProm server([](const std::string& p, const std::string& q) {
    return JobReply(p, q, [](const std::string&) { return std::string(); });
  });
  RunResult r = RunTfdiag("analyze --prometheus " + server.url() +
                          " --job j --start 30000000000 --end 30000000120 --no-progress");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("time '30000000000': Unix seconds out of range (expected 0..4e9)"),
            std::string::npos)
      << r.err;
}

// Agent series whose peer_task is "ps:" (std::stoi("") threw: SIGABRT) or "ps:-5" (a phantom
// task ps:-5) or past the index range.
TEST(HostilePrometheus, BadPeerTaskIsExit2) {
  for (const std::string task : {"ps:", "ps:-5", "ps:99999999999", "nobody:1"}) {
    HostileProm server([&](const std::string& p, const std::string& q) {
      return JobReply(p, q, [&](const std::string& pq) {
        if (pq.find("tfdiag_traffic_bytes_total") == std::string::npos) return std::string();
        return Success("vector", R"([{"metric":{"pod":"j-worker-0","peer":"10.0.0.1:2222",)"
                                 R"("peer_task":")" +
                                     task + R"(","direction":"sent"},"value":[1120,"100"]}])");
      });
    });
    RunResult r = Analyze(server);
    EXPECT_EQ(r.exit_code, 2) << task << ": " << r.err;
    EXPECT_NE(r.err.find("peer_task=\"" + task +
                         "\"}: peer_task: expected <ps|worker|chief|master|evaluator>:<index "
                         "0..999999>"),
              std::string::npos)
        << task << ": " << r.err;
  }
}

// 200,000 '[' as the reply: RapidJSON's recursive parser overflowed the stack (SIGSEGV).
TEST(HostilePrometheus, DeepReplyIsExit2) {
  for (const char* at : {"/api/v1/status/buildinfo", "container_cpu_usage_seconds_total"}) {
    HostileProm server([&](const std::string& p, const std::string& q) {
      return JobReply(p, q, [&](const std::string& pq) {
        return pq.find(at) == std::string::npos ? std::string() : std::string(200000, '[');
      });
    });
    RunResult r = Analyze(server);
    EXPECT_EQ(r.exit_code, 2) << at << ": " << r.err;
    EXPECT_NE(r.err.find(": byte 64: nesting deeper than 64 arrays and objects: the reply is not "
                         "the Prometheus HTTP API"),
              std::string::npos)
        << at << ": " << r.err;
  }
}

// A restart count of 3e9 (past int32: "restarted 1486618624 times" before) or 1e300.
TEST(HostilePrometheus, RestartsOutOfRangeIsExit2) {
  for (const std::string v : {"3e9", "1e300", "-1"}) {
    HostileProm server([&](const std::string& p, const std::string& q) {
      return JobReply(p, q, [&](const std::string& pq) {
        if (pq.find("kube_pod_container_status_restarts_total") == std::string::npos)
          return std::string();
        return Success("vector",
                       R"([{"metric":{"pod":"j-worker-0"},"value":[1120,")" + v + "\"]}]");
      });
    });
    RunResult r = Analyze(server);
    EXPECT_EQ(r.exit_code, 2) << v << ": " << r.err;
    EXPECT_NE(r.err.find("kube_pod_container_status_restarts_total{pod=\"j-worker-0\"}: an "
                         "increase of "),
              std::string::npos)
        << v << ": " << r.err;
  }
}

// A sample time that is no Unix time (1e300 s: seconds x 1e9 overflowed int64 ns).
TEST(HostilePrometheus, SampleTimeOutOfRangeIsExit2) {
  HostileProm server([](const std::string& p, const std::string& q) {
    return JobReply(p, q, [](const std::string& pq) {
      if (pq.find("rate(container_cpu_usage_seconds_total") == std::string::npos)
        return std::string();
      return Success("matrix",
                     R"([{"metric":{"pod":"j-ps-0"},"values":[[1000,"1"],[1e300,"1"]]}])");
    });
  });
  RunResult r = Analyze(server);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/api/v1/query_range: data.result[0].values: expected [time (Unix s, "
                       "0..4e9), \"value\"] pairs"),
            std::string::npos)
      << r.err;
}

// A reply whose header is 64 MB (one line) or whose headers are 2 MB of 1 KB lines ends
// the run naming the size and the limit, not libcurl's "Out of memory" as "cannot be reached".
TEST(HostilePrometheus, GiantReplyHeadersNameTheLimit) {
  for (const bool one_line : {true, false}) {
    HostileProm server([one_line](const std::string&, const std::string&) {
      std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
      if (one_line) {
        head += "X-Pad: " + std::string(64 << 20, 'a') + "\r\n";
      } else {
        for (int i = 0; i < 2000; ++i)
          head += "X-Pad-" + std::to_string(i) + ": " + std::string(1000, 'a') + "\r\n";
      }
      return head + "Connection: close\r\n\r\n{}";
    });
    RunResult r = Analyze(server);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.find("Out of memory"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("cannot be reached"), std::string::npos) << r.err;
    // One giant line trips libcurl's own limit; many lines of 1 KB, tfdiag's 256 KiB first.
    EXPECT_NE(r.err.find(one_line ? "has more HTTP header bytes than libcurl accepts (at most "
                                    "300 KiB"
                                  : "bytes of HTTP headers (the limit is 256 KiB"),
              std::string::npos)
        << r.err;
  }
}

// A reply past --prometheus-max-bytes ends the run naming the cap (it was read up to 1 GiB and
// then reported as "cannot be reached").
TEST(HostilePrometheus, ReplyPastMaxBytesIsExit2) {
  HostileProm server([](const std::string& p, const std::string& q) {
    return JobReply(p, q, [](const std::string& pq) {
      if (pq.find("created_by_name") == std::string::npos) return std::string();
      std::string r;
      for (int i = 0; i < 20000; ++i) {
        r += std::string(r.empty() ? "" : ",") + R"({"metric":{"namespace":"n","pod":"j-worker-)" +
             std::to_string(i) + R"("},"value":[1120,"1"]})";
      }
      return Success("vector", "[" + r + "]");
    });
  });
  RunResult r = Analyze(server, " --prometheus-max-bytes 100000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is larger than 100000 bytes (--prometheus-max-bytes)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("cannot be reached"), std::string::npos) << r.err;
}

// 150,000 pods with 160-character names: their regex (25 MB) is past what curl_easy_escape
// encodes, which returned NULL, dereferenced (SIGSEGV). The reply is refused at the series cap.
TEST(HostilePrometheus, TooManyPodsIsExit2) {
  HostileProm server([](const std::string& p, const std::string& q) {
    return JobReply(p, q, [](const std::string& pq) {
      if (pq.find("created_by_name") == std::string::npos) return std::string();
      const std::string pad(150, 'x');
      std::string r = "[";
      for (int i = 0; i < 150000; ++i) {
        r += std::string(i ? "," : "") + R"({"metric":{"namespace":"n","pod":"j-)" + pad +
             std::to_string(i) + R"("},"value":[1120,"1"]})";
      }
      return Success("vector", r + "]");
    });
  });
  RunResult r = Analyze(server);
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 2000);
  EXPECT_NE(
      r.err.find("the reply has more than 100000 series, the most tfdiag reads from one query"),
      std::string::npos)
      << r.err.substr(0, 2000);
}

// A job of 8,002 pods with 150-character names: their regex (1.2 MB) is queried in batches of
// at most 256 KiB (one regex of a million names was past libcurl's and Prometheus's limits), and
// the batches' series are merged.
TEST(HostilePrometheus, ManyPodsAreQueriedInBatches) {
  std::atomic<size_t> longest{0};
  std::atomic<int> cpu_queries{0};
  HostileProm server([&](const std::string& p, const std::string& q) {
    if (q.size() > longest) longest = q.size();
    if (q.find("rate(container_cpu_usage_seconds_total") != std::string::npos) ++cpu_queries;
    return JobReply(p, q, [](const std::string& pq) {
      if (pq.find("created_by_name=\"j\"") == std::string::npos) return std::string();
      std::string r = R"([{"metric":{"namespace":"n","pod":"j-ps-0"},"value":[1120,"1"]},)"
                      R"({"metric":{"namespace":"n","pod":"j-worker-0"},"value":[1120,"1"]})";
      for (int i = 0; i < 8000; ++i) {
        r += R"(,{"metric":{"namespace":"n","pod":"j-)" + std::string(150, 'x') +
             std::to_string(i) + R"("},"value":[1120,"1"]})";
      }
      return Success("vector", r + "]");
    });
  });
  RunResult r = Analyze(server, " -f json");
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("\"j-worker-0\""), std::string::npos);
  EXPECT_NE(r.out.find("\"j-ps-0\""), std::string::npos);
  EXPECT_EQ(cpu_queries, 5);
  // The batches are full, and no query holds more than four of them (the agents' span query:
  // traffic start, exit, cpuset and CPU limit; a POST body Prometheus reads up to 10 MB of).
  EXPECT_GT(longest, 3 * 250000u);
  EXPECT_LT(longest, 4 * (256u << 10) + 2000);
}

// A server that takes 0.7 s per query: the run's 14+ queries would take 10 s and more, each
// within --prometheus-timeout 1; the run's deadline (4 x the timeout) ends it.
TEST(HostilePrometheus, SlowServerMeetsTheRunDeadline) {
  HostileProm server([](const std::string& p, const std::string& q) {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    return JobReply(p, q, [](const std::string&) { return std::string(); });
  });
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r = Analyze(server, " --prometheus-timeout 1");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the run's deadline of 4 s (4 x --prometheus-timeout) passed before"),
            std::string::npos)
      << r.err;
  EXPECT_LT(secs, 6.5);
  EXPECT_LT(server.requests(), 9);
}

// Issue 36: a PromQL-compatible store whose buildinfo names no version (VictoriaMetrics 1.79:
// {"status":"success","data":{}}) is asked the queries, not refused ("is ... a Prometheus
// server?", exit 2, before); a reply that is no API reply still is.
TEST(HostilePrometheus, BuildinfoWithoutVersionIsAskedNotRefused) {
  HostileProm server([](const std::string& p, const std::string& q) {
    return JobReply(p, q, [](const std::string& pq) {
      return pq.find("/api/v1/status/buildinfo") == 0 ? R"({"status":"success","data":{}})"
                                                      : std::string();
    });
  });
  RunResult r = Analyze(server, " -f json");
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("\"j-worker-0\""), std::string::npos);
  HostileProm error([](const std::string& p, const std::string& q) {
    return JobReply(p, q, [](const std::string& pq) {
      return pq.find("/api/v1/status/buildinfo") == 0 ? R"({"status":"error","data":{}})"
                                                      : std::string();
    });
  });
  r = Analyze(error);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is " + error.url() + " a Prometheus server?"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
