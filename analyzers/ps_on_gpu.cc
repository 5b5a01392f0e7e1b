#include "analyzers/ps_on_gpu.h"

#include "analyzers/capture_queries.h"
#include "core/duration.h"

namespace tfdiag {

std::vector<Finding> RunPsOnGpu(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs) continue;
    int gpus = 0;
    int64_t ops = 0, copies = 0;
    TimeNs gpu_ns = 0, copy_ns = 0;
    std::string device;
    for (uint32_t d : t.device_ids) {  // not every device per task: quadratic in tasks
      const DeviceRow& dev = c.devices[d];
      if (c.Str(dev.type) != "GPU") continue;
      if (c.Str(dev.sub).empty()) {
        ++gpus;
        if (device.empty()) device = c.Str(dev.name);
      }
      c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
        ++ops;
        gpu_ns += op.dur();
        std::string_view n = c.Str(c.OpName(op)), ty = c.Str(c.OpType(op));
        if (n.find("HtoD") != std::string_view::npos || ty.find("HtoD") != std::string_view::npos) {
          ++copies;
          copy_ns += op.dur();
        }
      });
    }
    if (gpus == 0 && ops == 0) continue;
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    f.summary = fmt::format(
        "{} runs on a GPU ({}): {} ops on GPU devices, {} host-to-device copies ({}); PS "
        "work is memory-bound and gains nothing from a GPU",
        t.label, device.empty() ? "GPU stream" : device, ops, copies,
        FormatDuration(double(copy_ns)));
    f.evidence = {{"GPU devices", double(gpus), "count"},
                  {"ops on GPU devices", double(ops), "count"},
                  {"op time on GPU devices", gpu_ns / 1e3, "us"},
                  {"host-to-device copies", double(copies), "count"},
                  {"host-to-device copy time", copy_ns / 1e3, "us"}};
    f.ops = {device};
    f.range_start = t.first_ns;
    f.range_end = t.last_ns;
    out.push_back(std::move(f));
  }
  // Manifests and pods: nvidia.com/gpu limits on PS containers.
  if (in.k8s != nullptr) {
    for (const K8sReplicaType& r : in.k8s->replicas) {
      if (r.role != "ps") continue;
      for (const K8sContainer& k : r.containers) {
        if (k.res.gpu_limit <= 0) continue;
        Finding f = MakeFinding(rule, "manifest", k.source.path + ".resources.limits");
        f.subject = k.source.Where() + ".resources.limits";
        f.task = "ps";
        f.summary = fmt::format(
            "{} '{}' PS container '{}' asks for {} nvidia.com/gpu ({} replicas): PS work is "
            "memory-bound and gains nothing from a GPU",
            r.object_kind, r.object_name, k.name, k.res.gpu_limit, r.replicas);
        f.evidence = {{"GPUs per PS", double(k.res.gpu_limit), "count"},
                      {"PS replicas", double(r.replicas), "count"}};
        out.push_back(std::move(f));
      }
    }
    for (const K8sPod& p : in.k8s->pods) {
      int64_t gpus = 0;
      for (const K8sContainer& k : p.containers) gpus += k.res.gpu_limit;
      if (p.role != "ps" || gpus <= 0) continue;
      Finding f = MakeFinding(rule, "pod", p.name);
      f.task = "ps";
      f.ops.push_back(p.source.Where());
      f.summary = fmt::format("PS pod {} on {} holds {} nvidia.com/gpu", p.name, p.node, gpus);
      f.evidence = {{"GPUs", double(gpus), "count"}};
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace tfdiag
