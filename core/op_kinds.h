// Op types the capture layer itself must tell apart while it recovers steps (RecoverSteps,
// core/capture_finish.h); the analyzers' other op-type tests are in analyzers/op_names.h.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace tfdiag {

// tf.data's producer ops (MapDataset, ParallelMapDatasetV2, BatchDatasetV2, ...: type ending
// in "Dataset" or "DatasetV<N>"): an input pipeline running in the background, beside the step
// (a prefetched iterator's producer), neither the step's compute nor a wait of it, and no bound
// of a step's span (https://www.tensorflow.org/guide/data_performance#prefetching).
bool IsInputProducerOpType(std::string_view type);

}  // namespace tfdiag
