// XSpaces written in tests with the generated classes (TSL's xplane.proto): lines of events whose
// metadata and int stats are interned per plane, and a reading of the result through tfdiag's
// XSpace reader.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collectors/xplane/xplane.pb.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/capture_builder.h"

namespace tfdiag::test {

// One event: its metadata name ("node:Type" for a TF op), start offset from the line's
// timestamp and duration (us), and int64 stats by name ("group_id", "correlation_id", ...).
struct XEv {
  std::string name;
  int64_t start_us, dur_us;
  std::map<std::string, int64_t> stats;
};

// Appends line `id` named `name` (timestamp 1 ms) with `evs` to plane `p`; event and stat
// metadata are reused by name from what `p` already has, else added with the next id.
inline void AddXLine(xplane::XPlane* p, int64_t id, const std::string& name,
                     const std::vector<XEv>& evs) {
  std::map<std::string, int64_t> ids;
  for (const auto& [k, md] : p->event_metadata()) ids[md.name()] = k;
  std::map<std::string, int64_t> sids;
  for (const auto& [k, md] : p->stat_metadata()) sids[md.name()] = k;
  xplane::XLine* line = p->add_lines();
  line->set_id(id);
  line->set_name(name);
  line->set_timestamp_ns(1'000'000);
  for (const XEv& e : evs) {
    auto [it, fresh] = ids.emplace(e.name, static_cast<int64_t>(ids.size()) + 1);
    if (fresh) {
      (*p->mutable_event_metadata())[it->second].set_id(it->second);
      (*p->mutable_event_metadata())[it->second].set_name(e.name);
    }
    xplane::XEvent* x = line->add_events();
    x->set_metadata_id(it->second);
    x->set_offset_ps(e.start_us * 1'000'000);
    x->set_duration_ps(e.dur_us * 1'000'000);
    for (const auto& [k, v] : e.stats) {
      auto [sit, sfresh] = sids.emplace(k, static_cast<int64_t>(sids.size()) + 1);
      if (sfresh) {
        (*p->mutable_stat_metadata())[sit->second].set_id(sit->second);
        (*p->mutable_stat_metadata())[sit->second].set_name(k);
      }
      xplane::XStat* s = x->add_stats();
      s->set_metadata_id(sit->second);
      s->set_int64_value(v);
    }
  }
}

// Writes `space` to `path` and reads it back with ReadXSpace (a failure is a test failure).
inline Capture ReadXSpaceFile(const xplane::XSpace& space, const std::string& path) {
  std::string bytes;
  EXPECT_TRUE(space.SerializeToString(&bytes));
  std::ofstream(path, std::ios::binary) << bytes;
  CaptureBuilder b;
  const Status st = ReadXSpace(path, &b);
  EXPECT_TRUE(st.ok()) << st.message();
  return b.Finish();
}

}  // namespace tfdiag::test
