// Rewrites an XSpace so that each plane has one XLine per line id, holding all the events of
// that id (offsets rebased to the earliest timestamp), as the TF2 profiler writes a host thread
// over a whole capture; the simulator writes lines of at most 8192 events. For
// bench/xplane_bench.sh LONG_LINES=1: peak memory of readers that parse a whole XLine grows with
// it. Reads the input whole (a bench tool, not a reader).
// Usage: xplane_long_lines IN.xplane.pb OUT.xplane.pb; prints "planes P lines L events E".
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "collectors/xplane/xplane.pb.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: xplane_long_lines IN.xplane.pb OUT.xplane.pb\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  tfdiag::xplane::XSpace space;
  if (!in || !space.ParseFromString(ss.str())) {
    std::fprintf(stderr, "%s: cannot read an XSpace\n", argv[1]);
    return 2;
  }
  long long lines = 0, events = 0;
  for (tfdiag::xplane::XPlane& plane : *space.mutable_planes()) {
    std::map<int64_t, tfdiag::xplane::XLine> merged;
    for (tfdiag::xplane::XLine& line : *plane.mutable_lines()) {
      auto [it, fresh] = merged.emplace(line.id(), tfdiag::xplane::XLine());
      tfdiag::xplane::XLine& m = it->second;
      if (fresh) {
        m.set_id(line.id());
        m.set_name(line.name());
        m.set_timestamp_ns(line.timestamp_ns());
      }
      // Lines of one id come in time order: the first one's timestamp is the earliest.
      const int64_t shift_ps = (line.timestamp_ns() - m.timestamp_ns()) * 1000;
      for (tfdiag::xplane::XEvent& e : *line.mutable_events()) {
        e.set_offset_ps(e.offset_ps() + shift_ps);
        *m.add_events() = std::move(e);
      }
    }
    plane.clear_lines();
    for (auto& [id, line] : merged) {
      events += line.events_size();
      ++lines;
      *plane.add_lines() = std::move(line);
    }
  }
  std::ofstream out(argv[2], std::ios::binary);
  if (!space.SerializeToOstream(&out)) {
    std::fprintf(stderr, "%s: cannot write\n", argv[2]);
    return 2;
  }
  std::printf("planes %d lines %lld events %lld\n", space.planes_size(), lines, events);
  return 0;
}
