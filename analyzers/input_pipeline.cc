#include "analyzers/input_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "core/escape.h"

namespace tfdiag {

namespace {

// tf.data's option wrappers: no transformation of the user's (the autotuning root, and the
// dataset options' intra-op and private thread pools).
bool IsOptionStage(std::string_view s) {
  return s == "Model" || s == "MaxIntraOpParallelism" || s == "PrivateThreadPool";
}

// The path's stages after "Iterator", each index ("[0]") cut.
std::vector<std::string> StagesOf(std::string_view path) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= path.size()) {
    size_t end = path.find("::", at);
    if (end == std::string_view::npos) end = path.size();
    std::string_view s = path.substr(at, end - at);
    if (const size_t b = s.find('['); b != std::string_view::npos) s = s.substr(0, b);
    if (!s.empty()) out.push_back(Printable(s));  // profile text: escaped before any terminal
    at = end + 2;
  }
  if (!out.empty() && out.front() == "Iterator") out.erase(out.begin());
  return out;
}

}  // namespace

InputPipeline InputPipelineOfTask(const Capture& c, uint32_t task) {
  InputPipeline p;
  std::vector<std::string> longest;
  // The deepest path; of equally deep ones (a second pipeline, an interleave's branches) the one
  // with the most GetNext calls, then the first by text: the same whichever decoder read it.
  int64_t longest_calls = -1;
  std::string_view longest_path;
  for (const InputIteratorRow& r : c.input_iterators) {
    if (r.task != task) continue;
    const std::string_view path = c.Str(r.path);
    std::vector<std::string> s = StagesOf(path);
    s.erase(
        std::remove_if(s.begin(), s.end(), [](const std::string& x) { return IsOptionStage(x); }),
        s.end());
    p.get_next += r.count;
    const bool deeper = s.size() > longest.size();
    const bool tie = s.size() == longest.size() && longest_calls >= 0;
    if (deeper ||
        (tie && (r.count > longest_calls || (r.count == longest_calls && path < longest_path)))) {
      longest = std::move(s);
      longest_calls = r.count;
      longest_path = path;
    }
  }
  p.chain = std::move(longest);
  const auto prefetch = std::find(p.chain.begin(), p.chain.end(), "Prefetch");
  p.prefetch = prefetch != p.chain.end();
  p.prefetch_last = p.prefetch && prefetch == p.chain.begin();
  if (p.prefetch) p.after_prefetch.assign(p.chain.begin(), prefetch);
  for (const std::string& s : p.chain) {
    if (s == "Map" || s == "Interleave") p.sequential.push_back(s);
  }
  return p;
}

std::string InputPipelineAdvice(const InputPipeline& p) {
  if (p.chain.empty()) return "";
  std::string s = fmt::format(
      "The profile's tf.data pipeline, from what the step reads to its source (TF2 iterator "
      "events): {}. ",
      fmt::join(p.chain, " <- "));
  if (!p.prefetch) {
    s += "It has no prefetch: end it with .prefetch(tf.data.AUTOTUNE).";
  } else if (!p.prefetch_last) {
    s += fmt::format(
        "Its prefetch is not its last transformation: {} after it run{} inside each step's "
        "GetNext, "
        "not ahead of the step; move .prefetch(tf.data.AUTOTUNE) to the end.",
        fmt::join(p.after_prefetch, ", "), p.after_prefetch.size() == 1 ? "s" : "");
  } else {
    s += "It already ends with a prefetch, so adding one buys nothing: its buffer runs dry "
         "because the stages before it are slower than the step; speed those up.";
  }
  if (!p.sequential.empty()) {
    s += fmt::format(
        " {} run{} one element at a time: give {} num_parallel_calls="
        "tf.data.AUTOTUNE.",
        fmt::join(p.sequential, ", "), p.sequential.size() == 1 ? "s" : "",
        p.sequential.size() == 1 ? "it" : "them");
  }
  return s;
}

}  // namespace tfdiag
