// psload's wire protocol and counted blocking TCP connections.
//
// Every message is one frame: an 8-byte header {u32 type, u32 count} in host byte order (psload
// talks to itself on one machine), then a payload whose length follows from type, count and the
// embedding dim (below). Byte counters include the header: they are what send()/recv() moved on
// the socket, so they match what an eBPF probe on tcp_sendmsg/tcp_cleanup_rbuf sees.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace psload {

// Frame types. "n" is the header's count.
enum FrameType : uint32_t {
  kHello = 1,       // client -> server; payload n bytes: u32 dim, then the task name ("worker:0")
  kPull = 2,        // worker -> PS; payload n x u64 row ids (local to the shard)
  kPullReply = 3,   // PS -> worker; payload n x dim x f32 rows
  kPush = 4,        // worker -> PS; payload n x u64 row ids, then n x dim x f32 gradients
  kPushAck = 5,     // PS -> worker; no payload (n = rows applied)
  kDensePull = 6,   // worker -> PS; no payload (n = floats wanted)
  kDenseReply = 7,  // PS -> worker; payload n x f32
  kRead = 8,        // worker -> hdfs; no payload (n = bytes wanted)
  kData = 9,        // hdfs -> worker; payload n bytes of input data
  kError = 10,      // any direction; payload n bytes of text, then the sender closes
};

struct FrameHeader {
  uint32_t type = 0;
  uint32_t count = 0;
};
static_assert(sizeof(FrameHeader) == 8, "the header is two u32");

// Largest payload a receiver accepts, bytes; a bigger frame is a protocol error.
constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 30;

// One connected TCP socket with exact byte counters. The fd stays open until destruction, so
// Shutdown() from another thread is safe while a reader or writer is blocked on it.
// Thread-safety: one reader and one writer at a time; counters and Shutdown() from any thread.
class Conn {
 public:
  explicit Conn(int fd);  // takes ownership; reads the local and remote addresses
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Sends a header and up to two payload pieces with one writev loop (no Nagle split).
  bool SendFrame(uint32_t type, uint32_t count, const void* p1 = nullptr, size_t n1 = 0,
                 const void* p2 = nullptr, size_t n2 = 0);
  // Sends raw payload bytes (the rest of a frame whose header went out already).
  bool SendBytes(const void* p, size_t n);
  // Reads one header. False on EOF (eof() true, no error) or error (error() says why).
  bool RecvHeader(FrameHeader* h);
  // Reads exactly n bytes.
  bool RecvExact(void* p, size_t n);
  // Reads and discards n bytes through a bounded buffer.
  bool RecvDiscard(size_t n);
  // Reads the frame after `h`; if it is kError, sets error() to its text and returns false.
  // Otherwise checks that it is `want` and returns true.
  bool Expect(const FrameHeader& h, uint32_t want);

  void Shutdown();  // wakes a blocked reader/writer; idempotent

  int fd() const { return fd_; }
  const std::string& local() const { return local_; }    // "127.0.0.1:40312"
  const std::string& remote() const { return remote_; }  // "127.0.0.1:22220"
  bool eof() const { return eof_; }
  const std::string& error() const { return error_; }
  void set_error(std::string e) { error_ = std::move(e); }

  // Peer's task ("worker:0" from its kHello; set by the owner), and the owner's label.
  std::string peer_task;

  std::atomic<uint64_t> bytes_sent{0}, bytes_received{0};    // header + payload bytes
  std::atomic<uint64_t> frames_sent{0}, frames_received{0};  // frames (headers)
  // Application counters kept by the owner: embedding rows pulled/pushed over this connection,
  // and input bytes (kData payload) moved over it.
  std::atomic<uint64_t> rows_pulled{0}, rows_pushed{0}, data_bytes{0};

 private:
  int fd_;
  std::string local_, remote_;
  bool eof_ = false;
  std::string error_;
};

// Splits "host:port"; false if malformed.
bool SplitHostPort(const std::string& hp, std::string* host, int* port);

// Binds and listens on exactly `hostport` (IPv4, SO_REUSEADDR). Returns the fd or -1 (error set).
int ListenOn(const std::string& hostport, std::string* error);

// Connects to `hostport`, retrying refused connections every 50 ms for `timeout_s` seconds or
// until *stop becomes true. Sets TCP_NODELAY. Returns the fd or -1 (error set).
int ConnectWithRetry(const std::string& hostport, double timeout_s, const std::atomic<bool>* stop,
                     std::string* error);

// "ip:port" of a socket's local (peer=false) or remote (peer=true) end.
std::string SocketAddress(int fd, bool peer);

}  // namespace psload
