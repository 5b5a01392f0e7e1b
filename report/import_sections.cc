#include "report/import_sections.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <type_traits>

#include "analyzers/live_stats.h"
#include "core/duration.h"
#include "report/table.h"

namespace tfdiag {

namespace {

constexpr const char* kTimelineDoc =
    "Horovod docs, \"Analyze Performance\" (Horovod Timeline), "
    "https://horovod.readthedocs.io/en/stable/timeline_include.html";
constexpr const char* kFusionDoc =
    "Horovod docs, \"Tensor Fusion\", https://horovod.readthedocs.io/en/stable/"
    "tensor-fusion_include.html";
constexpr const char* kGpuDoc =
    "Horovod docs, \"Horovod on GPU\", https://horovod.readthedocs.io/en/stable/gpus_include.html";
constexpr const char* kArticle =
    "西门宇少, \"不能再简单了~PS Worker分布式性能优化Tips\" (PS/worker distributed performance "
    "tips), 2021-04-19, republished on modb.pro (墨天轮)";

// Names from a workload reach a terminal: control characters escaped; a long name keeps its head
// and its tail (where tensor names differ), joined by "...".
std::string Printable(std::string_view s, size_t max = 64) {
  std::string out;
  auto add = [&](std::string_view part) {
    for (char ch : part) {
      const unsigned char u = static_cast<unsigned char>(ch);
      out += u < 0x20 || u == 0x7f ? fmt::format("\\x{:02x}", u) : std::string(1, ch);
    }
  };
  if (s.size() <= max) {
    add(s);
  } else {
    add(s.substr(0, max / 3));
    out += "...";
    add(s.substr(s.size() - (max - max / 3 - 3)));
  }
  return out;
}

std::string Pct(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100.0 * part / whole) : "-";
}

}  // namespace

namespace import_sections {

std::vector<std::string> NoteLines(const Capture& c) {
  std::vector<std::string> lines;
  for (const FileStats& f : c.stats.files) {
    if (!f.note.empty()) lines.push_back(fmt::format("{}: {}", f.path, f.note));
    if (f.kernels > 0) {
      lines.push_back(fmt::format(
          "{}: {} GPU kernels typed by their TF op (the launch's correlation_id or the device's "
          "TensorFlow Ops row), {} not tied to one (typed unknown)",
          f.path, f.kernels - f.kernels_untied, f.kernels_untied));
    }
  }
  for (const DuplicateInput& d : c.stats.duplicates) {
    lines.push_back(
        fmt::format("{}: {} as {}: read once, not counted twice", d.path, d.how, d.same_as));
  }
  for (const std::string& n : c.stats.notes) lines.push_back(n);
  if (c.stats.stream_all_devices > 0) {
    lines.push_back(fmt::format(
        "{} GPU stream:all row(s) left out ({} ops): they repeat the kernels of the same GPU's "
        "per-stream rows (stream:N), which are kept",
        c.stats.stream_all_devices, c.stats.stream_all_ops));
  }
  if (c.stats.cross_file_flows > 0) {
    lines.push_back(fmt::format(
        "{} DataFlow arrow(s) paired across files (the start in one file, the end in another)",
        c.stats.cross_file_flows));
  }
  // A bundle's live samples are analyzed without TF ops: only when there is neither.
  if (c.ops.empty() && c.processes.empty() && !c.stats.files.empty()) {
    lines.push_back(c.horovod.empty()
                        ? "nothing was analyzed: no input holds TensorFlow ops (see above)"
                        : "no TensorFlow ops: the PS/worker rules had nothing to read; the Horovod "
                          "section below is what these inputs tell");
  }
  return lines;
}

}  // namespace import_sections

std::string ImportNotesText(const Capture& c) {
  std::string out;
  for (const std::string& line : import_sections::NoteLines(c)) out += "  " + line + "\n";
  return out;
}

std::vector<std::string> HorovodAdvice(const HorovodStats& h) {
  std::vector<std::string> advice;
  int64_t lasts = 0;
  size_t top = 0;
  for (size_t r = 0; r < h.ranks.size(); ++r) {
    lasts += h.ranks[r].last;
    if (h.ranks[r].last > h.ranks[top].last) top = r;
  }
  // A rank last in at least half the negotiations, whose lateness adds up to 5% of the run or
  // more (a few microseconds of order between ranks is noise).
  if (h.ranks.size() >= 2 && lasts >= 3 && h.ranks[top].last * 2 >= lasts &&
      h.ranks[top].wait_ns * 20 >= h.span_ns) {
    advice.push_back(fmt::format(
        "Rank {} was the last to be ready in {} of {} negotiations ({}); the first ready rank "
        "waited {} in all for it. Every rank waits for the slowest before a tensor is reduced, so "
        "the job runs at rank {}'s pace: look at what delays it (its input pipeline, a slower GPU "
        "or node, a CPU limit, a busy neighbour). Source: {}.",
        top, h.ranks[top].last, lasts, Pct(h.ranks[top].last, lasts),
        FormatDuration(double(h.ranks[top].wait_ns)), top, kTimelineDoc));
  }
  if (h.collective_wall_ns > 0 && h.memcpy_wall_ns * 4 >= h.collective_wall_ns) {
    advice.push_back(fmt::format(
        "Copies into and out of the fusion (or host) buffers take {}, {} of the time in the "
        "collective ({}): many small tensors, or a buffer that splits them, cost copies rather "
        "than network; check the tensors' count and size and the fusion settings "
        "(HOROVOD_FUSION_THRESHOLD, HOROVOD_CYCLE_TIME). Source: {}.",
        FormatDuration(double(h.memcpy_wall_ns)), Pct(h.memcpy_wall_ns, h.collective_wall_ns),
        FormatDuration(double(h.collective_wall_ns)), kFusionDoc));
  }
  bool nccl = false, cpu_lib = false;
  for (const HorovodActivity& a : h.activities) {
    nccl = nccl || a.name.rfind("NCCL_", 0) == 0;
    cpu_lib = cpu_lib || a.name == "MPI_ALLREDUCE" || a.name == "GLOO_ALLREDUCE";
  }
  if (cpu_lib && !nccl) {
    advice.push_back(fmt::format(
        "The all-reduce runs over MPI or Gloo, not NCCL. For training on GPUs, NCCL adapts to "
        "the GPUs' interconnect (Horovod installed with HOROVOD_GPU_OPERATIONS=NCCL); on CPUs, "
        "MPI or Gloo is expected. Sources: {}; {}.",
        kGpuDoc, kArticle));
  }
  advice.push_back(fmt::format(
      "Ring all-reduce (Horovod, NCCL) is the layout to use when the model fits on one GPU: "
      "NCCL picks an efficient path for the GPUs' topology, where PS/worker training goes "
      "through gRPC and serialises every tensor. Parameter servers are for models that do not "
      "fit (large embedding tables). Source: {}.",
      kArticle));
  return advice;
}

std::string HorovodText(const Capture& c, bool color) {
  const HorovodStats& h = c.horovod;
  if (h.empty()) return "";
  auto bold = [&](std::string_view s) {
    return color ? fmt::format("\x1b[1m{}\x1b[0m", s) : std::string(s);
  };
  std::string out =
      bold("Horovod") + fmt::format(
                            "  ({} timeline{}: {} negotiations of {} tensors, {} ranks, span "
                            "{})\n",
                            h.files, h.files == 1 ? "" : "s", h.negotiations, h.tensors.size(),
                            h.ranks.size(), FormatDuration(h.span_ns));
  out += fmt::format(
      "  wall time: negotiation {} (first to last rank ready {}, summed), all-reduce {} (all "
      "collectives {}), memcpy {}",
      FormatDuration(h.negotiate_wall_ns), FormatDuration(h.wait_ns),
      FormatDuration(h.allreduce_wall_ns), FormatDuration(h.collective_wall_ns),
      FormatDuration(h.memcpy_wall_ns));
  if (h.queue_wall_ns > 0) out += ", queue " + FormatDuration(h.queue_wall_ns);
  if (h.wait_for_data_wall_ns > 0) {
    out += ", waiting for data " + FormatDuration(h.wait_for_data_wall_ns);
  }
  out += "\n";
  if (!h.activities.empty()) {
    TextTable t({"activity", ">count", ">wall", ">summed over tensors"});
    for (const HorovodActivity& a : h.activities) {
      t.AddRow({Printable(a.name), std::to_string(a.count), FormatDuration(a.wall_ns),
                FormatDuration(a.total_ns)});
    }
    out += t.Render();
  }
  // Ranks, the most often last first.
  std::vector<size_t> order(h.ranks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return h.ranks[a].last > h.ranks[b].last; });
  constexpr size_t kMaxRows = 10;
  TextTable ranks({">rank", ">ready marks", ">last ready", ">share", ">others waited"});
  int64_t lasts = 0;
  for (const HorovodRank& r : h.ranks) lasts += r.last;
  size_t shown_ranks = 0, late_ranks = 0;
  for (size_t i : order) late_ranks += h.ranks[i].last > 0;
  for (size_t i = 0; i < order.size() && shown_ranks < kMaxRows; ++i) {
    const HorovodRank& r = h.ranks[order[i]];
    if (r.last == 0) break;  // never last: nobody waited for it
    ++shown_ranks;
    ranks.AddRow({std::to_string(order[i]), std::to_string(r.ready), std::to_string(r.last),
                  Pct(r.last, lasts), FormatDuration(r.wait_ns)});
  }
  if (!ranks.empty()) {
    out += "\n  ranks by how often they were the last ready" +
           fmt::format(" ({} of {} ranks{}; the others never were)", shown_ranks, order.size(),
                       late_ranks > shown_ranks ? "; -f json for all" : "") +
           "\n" + ranks.Render();
  }
  TextTable tensors(
      {"tensor", ">negotiations", ">wait", ">mean wait", ">last rank", ">collective", ">memcpy"});
  for (size_t i = 0; i < h.tensors.size() && i < kMaxRows; ++i) {
    const HorovodTensor& t = h.tensors[i];
    tensors.AddRow({Printable(t.name), std::to_string(t.negotiations), FormatDuration(t.wait_ns),
                    t.negotiations > 0 ? FormatDuration(double(t.wait_ns) / t.negotiations) : "-",
                    t.last_rank < 0 ? "-" : fmt::format("{} ({}x)", t.last_rank, t.last_rank_count),
                    FormatDuration(t.collective_ns), FormatDuration(t.memcpy_ns)});
  }
  if (!tensors.empty()) {
    out += "\n  tensors by negotiation wait" +
           (h.tensors.size() > kMaxRows
                ? fmt::format(" ({} of {} shown; -f json for all)", kMaxRows, h.tensors.size())
                : std::string()) +
           "\n" + tensors.Render();
  }
  out += "\n  advice:\n";
  for (const std::string& a : HorovodAdvice(h)) out += "    - " + a + "\n";
  return out + "\n";
}

std::vector<SchedFigures> SchedFiguresOf(const Capture& c, const std::vector<SchedStats>& sched) {
  std::vector<SchedFigures> out;
  for (const SchedStats& s : sched) {
    if (s.process >= c.processes.size()) continue;
    SchedFigures f;
    f.stats = &s;
    const ProcessRow& row = c.processes[s.process];
    f.task = std::string(c.TaskLabelOf(row.task));
    f.who = ProcessWho(c, row);
    // Rows are sorted by (process, ts): the window's waits are the last row's minus the first's.
    const auto [lo, hi] = std::equal_range(
        c.sched.begin(), c.sched.end(), s.process, [](const auto& a, const auto& b) {
          if constexpr (std::is_same_v<std::decay_t<decltype(a)>, SchedRow>) {
            return a.process < b;
          } else {
            return a < b.process;
          }
        });
    const SchedRow* first = lo == hi ? nullptr : &*lo;
    const SchedRow* last = lo == hi ? nullptr : &*std::prev(hi);
    if (first != nullptr) {
      for (int i = 0; i < kRunqHistSlots; ++i) {
        f.hist[i] = std::max<int64_t>(0, last->runq_hist[i] - first->runq_hist[i]);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string RunqHistText(const SchedFigures& f) {
  int64_t total = 0;
  for (int64_t n : f.hist) total += n;
  if (total <= 0) return "-";
  // The 4 fullest buckets, in bound order: every bucket of 1% or more ran past 300 characters
  // (issue 39); the JSON's runq_hist keeps them all.
  std::vector<int> shown;
  for (int i = 0; i < kRunqHistSlots; ++i) {
    if (100 * f.hist[i] >= total) shown.push_back(i);
  }
  const size_t all = shown.size();
  std::stable_sort(shown.begin(), shown.end(), [&](int a, int b) { return f.hist[a] > f.hist[b]; });
  if (shown.size() > 4) shown.resize(4);
  std::sort(shown.begin(), shown.end());
  std::string s;
  for (int i : shown) {
    s += fmt::format("{}<= {} {:.0f}%", s.empty() ? "" : ", ",
                     FormatDuration(std::ldexp(1.0, i + 1)), 100.0 * f.hist[i] / total);
  }
  if (all > shown.size()) s += fmt::format(" (+{} more)", all - shown.size());
  return s.empty() ? "-" : s;
}

std::string SchedText(const Capture& c, const std::vector<SchedStats>& sched, bool color) {
  const std::vector<SchedFigures> figs = SchedFiguresOf(c, sched);
  if (figs.empty()) return "";
  auto opt = [](bool known, double v, const char* f) {
    return known ? fmt::format(fmt::runtime(f), v) : std::string("-");
  };
  TextTable t({"task", "process", ">waits", ">mean wait", ">p99 wait", ">CPU demand", ">vol/s",
               ">invol/s", "run-queue waits by bound"});
  for (const SchedFigures& f : figs) {
    const SchedStats& s = *f.stats;
    const bool rates = s.window_s > 0;
    t.AddRow({Printable(f.task), Printable(f.who), std::to_string(s.runq_waits),
              s.runq_waits > 0 ? FormatDuration(s.runq_mean_us * 1e3) : "-",
              s.runq_waits > 0 ? "<= " + FormatDuration(s.runq_p99_us * 1e3) : "-",
              opt(true, s.cpu_demand, "{:.2f}"),
              opt(rates && s.voluntary >= 0, rates ? s.voluntary / s.window_s : 0, "{:.0f}"),
              opt(rates && s.involuntary >= 0, rates ? s.involuntary / s.window_s : 0, "{:.0f}"),
              RunqHistText(f)});
  }
  const std::string head = "Scheduling";
  return (color ? "\x1b[1m" + head + "\x1b[0m" : head) +
         "  (run-queue wait from wakeup to on-CPU, context switches: eBPF sched probe or the "
         "tfdiag agents; CPU demand: on-CPU + waiting, in CPUs)\n" +
         t.Render(2) + "\n";
}

}  // namespace tfdiag
