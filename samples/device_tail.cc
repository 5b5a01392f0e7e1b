// ScenarioParams::device_tail_ns: a GPU tracer plane for a worker host of the TF2 log directory,
// as TF 2.4's GPU tracer and derived timeline write it (tensorflow/core/profiler/utils/
// derived_timeline.cc: the device plane's "Steps" line, one event per step group from its first
// to its last device activity; "TensorFlow Ops", the TF op each kernel ran for). Its kernels run
// past the host's step marker, so XProf's step time (event_span.cc StepDetails::StepTime) is the
// device marker's span, neither the host marker's nor the two joined.
#include <fmt/format.h>

#include "collectors/xplane/xplane.pb.h"
#include "samples/sim_internal.h"

namespace tfdiag::sim::internal {

std::string DeviceTailPlane(const std::map<int64_t, std::pair<int64_t, int64_t>>& host_steps,
                            int64_t tail_ns, int64_t id, int64_t group_stat) {
  constexpr int64_t kLaunchLatencyNs = 1'000'000;  // the first kernel, 1 ms into the host step
  constexpr int64_t kForward = 1, kBackward = 2;   // event metadata: the two TF ops
  xplane::XPlane plane;
  plane.set_id(id);
  plane.set_name("/device:GPU:0");
  for (const auto& [mid, name] : {std::make_pair(kForward, "model/dense/MatMul:MatMul"),
                                  std::make_pair(kBackward, "gradient_tape/dense/MatMul:MatMul")}) {
    (*plane.mutable_event_metadata())[mid].set_id(mid);
    (*plane.mutable_event_metadata())[mid].set_name(name);
  }
  for (const auto& [mid, name] : {std::make_pair(kForward + 10, "volta_sgemm_128x64_nn"),
                                  std::make_pair(kBackward + 10, "volta_sgemm_128x64_tn"),
                                  std::make_pair(int64_t{20}, "step")}) {
    (*plane.mutable_event_metadata())[mid].set_id(mid);
    (*plane.mutable_event_metadata())[mid].set_name(name);
  }
  (*plane.mutable_stat_metadata())[group_stat].set_id(group_stat);
  (*plane.mutable_stat_metadata())[group_stat].set_name("group_id");
  xplane::XLine* stream = plane.add_lines();
  stream->set_id(1);
  stream->set_name("Stream #1(Compute)");
  xplane::XLine* ops = plane.add_lines();
  ops->set_id(-2);
  ops->set_name("TensorFlow Ops");
  xplane::XLine* steps = plane.add_lines();
  steps->set_id(-1);
  steps->set_name("Steps");
  const int64_t origin = host_steps.empty() ? 0 : host_steps.begin()->second.first;
  for (xplane::XLine* l : {stream, ops, steps}) l->set_timestamp_ns(origin);
  auto add = [&](xplane::XLine* l, int64_t mid, int64_t start, int64_t end, int64_t step) {
    xplane::XEvent* e = l->add_events();
    e->set_metadata_id(mid);
    e->set_offset_ps((start - origin) * 1000);
    e->set_duration_ps((end - start) * 1000);
    xplane::XStat* s = e->add_stats();
    s->set_metadata_id(group_stat);
    s->set_int64_value(step);
  };
  for (const auto& [step, span] : host_steps) {
    const int64_t begin = span.first + kLaunchLatencyNs, end = span.second + tail_ns;
    const int64_t mid = begin + (end - begin) / 2;
    add(stream, kForward + 10, begin, mid, step);
    add(stream, kBackward + 10, mid, end, step);
    add(ops, kForward, begin, mid, step);
    add(ops, kBackward, mid, end, step);
    add(steps, 20, begin, end, step);
  }
  std::string bytes;
  plane.SerializeToString(&bytes);
  return bytes;
}

}  // namespace tfdiag::sim::internal
