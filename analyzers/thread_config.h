// thread-config: TensorFlow/OpenMP thread settings visible in a manifest (TF_NUM_INTRAOP_THREADS,
// TF_NUM_INTEROP_THREADS, OMP_NUM_THREADS env; --intra_op_parallelism_threads,
// --inter_op_parallelism_threads, --num_intra_threads, --num_inter_threads flags) missing, or not
// equal to the container's CPU limit. TF reads the env variables when the session config leaves
// the pools at 0 (tensorflow/core/common_runtime/process_util.cc) and otherwise sizes them from
// the node's cores, not the pod's limit; Mogujie set both to the limit: ~40% fewer context
// switches (docs/rules/thread-config.md).
#pragma once

#include <vector>

#include "analyzers/analysis_input.h"

namespace tfdiag {

std::vector<Finding> RunThreadConfig(const AnalysisInput& in, const Rule& rule);

}  // namespace tfdiag
