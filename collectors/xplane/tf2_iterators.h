// The tf.data pipeline stages of a TF2 capture, for both decoders (the XSpace reader and the TF2
// trace JSON reader, as tf2_events.h): each "Iterator::" TraceMe event is one GetNext of one
// stage, named by its long name from the root ("Iterator::Model::Map::Prefetch": the XEvent
// metadata name; the trace JSON's `args.long_name`, its display name being the last level).
// TensorFlow's tf.data iterators record them (tensorflow/core/framework/dataset.cc,
// DatasetBaseIterator::GetNext's TraceMe); XProf's tf_data_stats reads the same events.
// Thread-safety: an instance belongs to one reader.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/capture.h"

namespace tfdiag {

class CaptureBuilder;  // core/capture_builder.h

// Whether a host event's full name (metadata or long name) is a tf.data iterator stage's.
bool IsInputIteratorName(std::string_view full);

// Sums the stage events of one file per (key, path): the XSpace reader keys them by task, the
// trace JSON reader by 0 (its file's task is known at its end).
class Tf2InputIterators {
 public:
  // Distinct stages kept per key and file; more are counted as ignored events (a hostile file
  // cannot grow the rows without bound).
  static constexpr size_t kMaxStages = 256;

  // One GetNext of stage `path` (interned full name) starting at `start`, `dur` ns (either < 0:
  // not counted; the sum saturates). False when the key already holds kMaxStages other stages (the
  // event is dropped).
  bool Add(uint32_t key, StrId path, TimeNs start, TimeNs dur);
  // Adds every key's stages to `b` as the stages of task `key`, and forgets them.
  void FlushByTask(CaptureBuilder* b);
  // Adds every key's stages to `b` as task `task`'s (the trace JSON reader's one key), and
  // forgets them.
  void FlushAs(uint32_t task, CaptureBuilder* b);
  bool empty() const { return rows_.empty(); }

 private:
  absl::flat_hash_map<std::pair<uint32_t, StrId>, InputIteratorRow> rows_;
  absl::flat_hash_map<uint32_t, size_t> stages_;  // per key
};

}  // namespace tfdiag
