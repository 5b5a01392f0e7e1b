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
// workers). Added workers are taken to bring new rows at that rate; where the ids of more
// batches overlap more (a hot set of ids), the aggregate grows less and the outlook reads low.
// 0 for one worker or a share outside (0, 1].
double AggregateGrowth(double async_apply_share, double workers);

}  // namespace tfdiag
