// Under SyncReplicasOptimizer, how a PS's aggregated apply grows with the workers (issue 44 item
// 3, the scaling outlook, analyzers/outlook.h). Thread-safety: pure functions.
#pragma once

namespace tfdiag {

// The share of a PS's aggregated applies that grows with the replicas aggregated, in [0, 1], from
// `async_apply_share` (ReplayModel::Ps: one push's apply as a share of the aggregated one,
// analyzers/sync_replicas.h AsyncApplyShare) at `workers` captured workers. An embedding's
// aggregate holds the distinct rows of the replicas' gradients: 1 / async_apply_share pushes'
// worth of rows at `workers` replicas, so each replica past the first brought
// (1 / share - 1) / (workers - 1) of a push's rows that were new (1: none shared, the aggregate
// grows with every worker added; 0: a dense variable's aggregate has its shape whatever the
// workers). The outlook (analyzers/outlook.cc Scaled) uses it as the share of the captured
// aggregate that grows in proportion to the workers, the rest keeping its size: a damped form
// of "every added replica brings that rate of new rows" (which at 2x would grow the aggregate
// more: 1.91x against 1.27x at a share of 1/8 and 27 workers), kept as the form checked on gen3
// report5 (tuned) and report4 (checked). Where the ids of more batches overlap more (a hot set
// of ids), the aggregate grows less and the outlook reads low.
// 0 for one worker or a share outside (0, 1].
double AggregateGrowth(double async_apply_share, double workers);

}  // namespace tfdiag
