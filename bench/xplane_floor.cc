// The floor `tfdiag analyze` is measured against on an XSpace (bench/xplane_bench.sh): libprotobuf
// reading the whole file into a string and ParseFromString into the XSpace class generated from
// collectors/xplane/xplane.proto (the same subset tfdiag reads), then counting the events.
// Prints: "bytes <N> planes <P> events <E> read_s <r> parse_s <p>".
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "collectors/xplane/xplane.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: xplane_floor FILE.xplane.pb\n");
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  std::ifstream f(argv[1], std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "%s: cannot open\n", argv[1]);
    return 2;
  }
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto t1 = Clock::now();
  tfdiag::xplane::XSpace space;
  if (!space.ParseFromString(bytes)) {
    std::fprintf(stderr, "%s: ParseFromString failed\n", argv[1]);
    return 2;
  }
  const auto t2 = Clock::now();
  long long events = 0;
  for (const auto& p : space.planes()) {
    for (const auto& l : p.lines()) events += l.events_size();
  }
  std::printf("bytes %zu planes %d events %lld read_s %.3f parse_s %.3f\n", bytes.size(),
              space.planes_size(), events, std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  return 0;
}
