// A task's tf.data input pipeline as a TF2 profile's iterator events show it
// (Capture::input_iterators), and what it says about input-bound's fix: whether the pipeline
// prefetches, whether the prefetch is its last transformation, and which map-like stages run one
// element at a time. The transformation names are tf.data's iterator prefixes (TensorFlow's
// tensorflow/core/kernels/data/*_dataset_op.cc: "Prefetch", "Map", "ParallelMapV2",
// "Interleave", "ParallelInterleaveV4", ...); the advice is the tf.data performance guide's
// (https://www.tensorflow.org/guide/data_performance: prefetch last, parallel map and
// interleave).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

struct InputPipeline {
  // The transformations from the one the step reads to the source, e.g. {"Map", "Prefetch",
  // "Generator"} for ds.prefetch(1).map(f) over a generator: the longest traced path of the
  // task, its tf.data option wrappers (Model, MaxIntraOpParallelism, PrivateThreadPool) left out,
  // an index ("FlatMap[0]") cut, each name escaped as core/escape.h Printable does (profile
  // text); of equally long paths the one with the most GetNext calls, then the first by text.
  // Empty when the capture traced no iterator of the task.
  std::vector<std::string> chain;
  bool prefetch = false;       // a Prefetch stage anywhere on the chain
  bool prefetch_last = false;  // the step reads from a Prefetch: nothing runs after it
  // The stages each step's GetNext runs after the first prefetch, not ahead of the step (chain
  // order); empty when the prefetch is last or there is none.
  std::vector<std::string> after_prefetch;
  // Map-like stages without num_parallel_calls ("Map", "Interleave"), chain order.
  std::vector<std::string> sequential;
  // GetNext events traced over every stage of the task (the chain's and any other's; one element
  // read through a chain of n stages is n events).
  int64_t get_next = 0;
};

// The pipeline of `task` (an index into c.tasks).
InputPipeline InputPipelineOfTask(const Capture& c, uint32_t task);

// input-bound's advice for `p`, one sentence each, "" when `p.chain` is empty: the chain as the
// step reads it, then what to change (a prefetch to add or to move last, the sequential stages
// to parallelize; with the prefetch already last, that the stages before it are what to speed up).
std::string InputPipelineAdvice(const InputPipeline& p);

}  // namespace tfdiag
