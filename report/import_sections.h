// Report sections about what was imported beyond TF ops: notes on the inputs (a file without TF
// ops and why, inputs given twice, GPU stream:all rows left out, DataFlow arrows paired across
// files) and the figures of Horovod timelines (core/horovod_stats.h). Text here; the JSON writers
// are templates over a RapidJSON writer, for report/json_report.cc.
// Thread-safety: pure functions.
#pragma once

#include <rapidjson/writer.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/traffic_stats.h"
#include "core/capture.h"

namespace tfdiag {

// Lines for the text report's Import section ("" when there is nothing to say), each indented
// by two spaces and ending in '\n'.
std::string ImportNotesText(const Capture& c);

// The text report's "Horovod" section ("" when no Horovod timeline was read): time in
// negotiation, all-reduce and memcpy; ranks by how often they were last ready; tensors by wait;
// advice. `color`: the heading in bold (ANSI).
std::string HorovodText(const Capture& c, bool color);

// What to do about a Horovod timeline's figures, one sentence each, with their sources: the rank
// the others wait for, copies against the collective, the collective's library, and where ring
// all-reduce fits (against a PS/worker layout).
std::vector<std::string> HorovodAdvice(const HorovodStats& h);

// The import notes as a JSON array of strings, under key "notes", inside the "import" object:
// the same lines as ImportNotesText, plus "duplicates": [{path, same_as, how}] and
// "stream_all_devices", "stream_all_ops", "cross_file_flows".
template <typename W>
void WriteImportNotesJson(const Capture& c, W* w);

// Key "horovod": null, or the HorovodStats with times in ns (keys end in _ns).
template <typename W>
void WriteHorovodJson(const Capture& c, W* w);

// One process's scheduling figures for the reports: its SchedStats and its run-queue waits in
// the window per log2 bucket (bucket i: waits of [2^i, 2^(i+1)) ns; last minus first SchedRow).
struct SchedFigures {
  const SchedStats* stats = nullptr;
  std::string task;  // "worker:3"
  std::string who;   // "pid 1234", "pod NAME" (live_stats.h ProcessWho)
  int64_t hist[kRunqHistSlots] = {};
};
// The figures of every process in `sched`, in its order.
std::vector<SchedFigures> SchedFiguresOf(const Capture& c, const std::vector<SchedStats>& sched);
// The run-queue histogram in words, buckets holding at least 1% of the waits: "<= 1.05 ms 50%,
// <= 8.39 ms 48%, <= 16.78 ms 2%" ("-" without waits).
std::string RunqHistText(const SchedFigures& f);

// The text report's "Scheduling" section ("" without sched figures): per process its run-queue
// waits (eBPF sched probe; in analyze --prometheus the agents' tfdiag_runqueue_latency_seconds
// and tfdiag_context_switches_total), mean and p99 wait, CPU demand, switches per s and the
// histogram. Workload names escaped. `color`: the heading in bold (ANSI).
std::string SchedText(const Capture& c, const std::vector<SchedStats>& sched, bool color);

// "sched": [{task, who, window_s, runq_waits, runq_mean_us, runq_p99_us, cpu_demand,
// voluntary_per_s, involuntary_per_s, involuntary_share, runq_hist: [count per log2 ns bucket]}]
// (an empty array without sched figures), for report/json_report.cc.
template <typename W>
void WriteSchedJson(const Capture& c, const std::vector<SchedStats>& sched, W* w);

// ---- implementation ----

namespace import_sections {
std::vector<std::string> NoteLines(const Capture& c);
template <typename W>
void Str(W* w, std::string_view k, std::string_view v) {
  w->Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
  w->String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}
template <typename W>
void Int(W* w, std::string_view k, int64_t v) {
  w->Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
  w->Int64(v);
}
}  // namespace import_sections

template <typename W>
void WriteImportNotesJson(const Capture& c, W* w) {
  using namespace import_sections;
  w->Key("notes");
  w->StartArray();
  for (const std::string& line : NoteLines(c)) {
    w->String(line.data(), static_cast<rapidjson::SizeType>(line.size()));
  }
  w->EndArray();
  w->Key("duplicates");
  w->StartArray();
  for (const DuplicateInput& d : c.stats.duplicates) {
    w->StartObject();
    Str(w, "path", d.path);
    Str(w, "same_as", d.same_as);
    Str(w, "how", d.how);
    w->EndObject();
  }
  w->EndArray();
  Int(w, "stream_all_devices", c.stats.stream_all_devices);
  Int(w, "stream_all_ops", c.stats.stream_all_ops);
  Int(w, "cross_file_flows", c.stats.cross_file_flows);
}

template <typename W>
void WriteHorovodJson(const Capture& c, W* w) {
  using namespace import_sections;
  w->Key("horovod");
  const HorovodStats& h = c.horovod;
  if (h.empty()) {
    w->Null();
    return;
  }
  w->StartObject();
  Int(w, "files", h.files);
  Int(w, "negotiations", h.negotiations);
  Int(w, "ready_marks", h.ready_marks);
  Int(w, "ops", h.ops);
  Int(w, "span_ns", h.span_ns);
  Int(w, "wait_ns", h.wait_ns);
  Int(w, "negotiate_wall_ns", h.negotiate_wall_ns);
  Int(w, "collective_wall_ns", h.collective_wall_ns);
  Int(w, "allreduce_wall_ns", h.allreduce_wall_ns);
  Int(w, "memcpy_wall_ns", h.memcpy_wall_ns);
  Int(w, "queue_wall_ns", h.queue_wall_ns);
  Int(w, "wait_for_data_wall_ns", h.wait_for_data_wall_ns);
  w->Key("activities");
  w->StartArray();
  for (const HorovodActivity& a : h.activities) {
    w->StartObject();
    Str(w, "name", a.name);
    Int(w, "count", a.count);
    Int(w, "total_ns", a.total_ns);
    Int(w, "wall_ns", a.wall_ns);
    w->EndObject();
  }
  w->EndArray();
  w->Key("ranks");
  w->StartArray();
  for (size_t r = 0; r < h.ranks.size(); ++r) {
    w->StartObject();
    Int(w, "rank", static_cast<int64_t>(r));
    Int(w, "ready_marks", h.ranks[r].ready);
    Int(w, "last_ready", h.ranks[r].last);
    Int(w, "wait_caused_ns", h.ranks[r].wait_ns);
    w->EndObject();
  }
  w->EndArray();
  w->Key("tensors");
  w->StartArray();
  for (const HorovodTensor& t : h.tensors) {
    w->StartObject();
    Str(w, "name", t.name);
    Int(w, "negotiations", t.negotiations);
    Int(w, "ops", t.ops);
    Int(w, "negotiate_ns", t.negotiate_ns);
    Int(w, "wait_ns", t.wait_ns);
    Int(w, "collective_ns", t.collective_ns);
    Int(w, "memcpy_ns", t.memcpy_ns);
    Int(w, "last_rank", t.last_rank);
    Int(w, "last_rank_count", t.last_rank_count);
    w->EndObject();
  }
  w->EndArray();
  w->Key("advice");
  w->StartArray();
  for (const std::string& a : HorovodAdvice(h)) {
    w->String(a.data(), static_cast<rapidjson::SizeType>(a.size()));
  }
  w->EndArray();
  w->EndObject();
}

template <typename W>
void WriteSchedJson(const Capture& c, const std::vector<SchedStats>& sched, W* w) {
  using namespace import_sections;
  auto num = [&](std::string_view k, double v) {
    w->Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
    w->Double(std::isfinite(v) ? v : -1);
  };
  w->Key("sched");
  w->StartArray();
  for (const SchedFigures& f : SchedFiguresOf(c, sched)) {
    const SchedStats& s = *f.stats;
    const double per_s = s.window_s > 0 ? 1 / s.window_s : 0;
    w->StartObject();
    Str(w, "task", f.task);
    Str(w, "who", f.who);
    num("window_s", s.window_s);
    Int(w, "runq_waits", s.runq_waits);
    num("runq_mean_us", s.runq_waits > 0 ? s.runq_mean_us : -1);
    num("runq_p99_us", s.runq_waits > 0 ? s.runq_p99_us : -1);
    num("cpu_demand", s.cpu_demand);
    num("voluntary_per_s", s.voluntary >= 0 && per_s > 0 ? s.voluntary * per_s : -1);
    num("involuntary_per_s", s.involuntary >= 0 && per_s > 0 ? s.involuntary * per_s : -1);
    num("involuntary_share", s.voluntary + s.involuntary > 0 ? s.involuntary_share : -1);
    w->Key("runq_hist");
    w->StartArray();
    for (int64_t n : f.hist) w->Int64(n);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace tfdiag
