// Vocabulary of TensorFlow op types and node names shared by the analyzers.
// Op type lists come from TensorFlow's op registry (tensorflow/core/ops/*.cc); name conventions
// from the graph builders (partitioned_variables.py "part_<k>", variables.py "<var>/read").
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "core/op_kinds.h"

namespace tfdiag {

// The producer node of an input as written: "^w" -> "w", "w/read:1_S11" -> "w/read".
std::string_view InputNode(std::string_view input);
// True when the input crossed devices (partition Recv): it ends in "_S<N>".
bool IsPartitionInput(std::string_view input);
// "<var>/read" -> "<var>"; other names unchanged.
std::string_view StripRead(std::string_view node);
// "<base>/part_<k>" -> "<base>" (and *part = k, k of at most 9 digits); other names unchanged
// (*part = -1).
std::string_view PartitionBase(std::string_view var, int* part = nullptr);

// VariableV2, Variable, VarHandleOp, hash tables ...
bool IsVariableOpType(std::string_view type);
// Ops whose first input is a variable (resource handle or ref): ReadVariableOp, ResourceGather,
// Resource*Apply*, Apply*, Assign*Variable*, Scatter*/ResourceScatter*, Assign/AssignAdd/AssignSub
// (tensorflow/core/ops/resource_variable_ops.cc, state_ops.cc, training_ops.cc).
bool IsVariableUseOpType(std::string_view type);
// "replica_3/dense/MatMul" -> "dense/MatMul": MirroredStrategy names the ops of replica i > 0
// "replica_<i>/..." (tensorflow/python/distribute/mirrored_run.py); other names unchanged.
std::string_view StripReplicaScope(std::string_view node);
// The variable a TF2 op touches, named by the op's name scope, for profiles that record no op
// inputs (the XSpace, the trace viewer's JSON). TF2 function graphs take each captured variable
// as a resource `_Arg` and name the ops on it by their Keras/tf.function scopes, so the scope
// stands for the variable (TF's function graphs: tensorflow/python/framework/func_graph.py
// captures; optimizer_v2.py names an apply "update" / "update_<N>" inside a function):
//   - VarHandleOp, VariableV2, ... (IsVariableOpType): the node name;
//   - ReadVariableOp, ResourceGather(Nd), Assign*VariableOp, ResourceScatter*: the scope the op
//     sits in, less the scopes of the ops it feeds (CamelCase components such as "MatMul",
//     "GatherV2", "Einsum", "MatMul_1", the names TF's Python API gives an op's scope by its
//     type: never a variable's name): "dense" of "dense/MatMul/ReadVariableOp", "dense/add" of
//     "dense/add/ReadVariableOp", "word_embeddings" of "word_embeddings/GatherV2/ReadVariableOp",
//     "embedding" of "embedding/embedding_lookup"; a top-level read is "ReadVariableOp" (its
//     numbered siblings read the variable the first captured); a numbered assign
//     ("AssignAddVariableOp_3", "m/AssignAddVariableOp_1") stays whole (a counter of its own);
//   - (Resource)(Sparse)Apply*: the variable of its ".../update_<var>/" scope (TF1 names it);
//     a function's numbered ".../update_<N>/" scope names none: the scope up to it, and
//     *numbered_update is set (the caller lists those only when nothing else names a variable).
// A leading "replica_<N>/" (MirroredStrategy's replica scopes, one variable mirrored on every
// replica) is left out. "" for other ops.
std::string_view Tf2VariableOfOp(std::string_view node, std::string_view type,
                                 bool* numbered_update);
// RecvTensor (the gRPC receive TF1 timelines record on the receiving task), _Recv and _HostRecv
// (tensorflow/core/kernels/sendrecv_ops.cc): a task waiting for a tensor from another device,
// not work of its own. A PS's receives are the gradients arriving over its NIC: they are left
// out of its busy and op time (TaskStats) and of the replay's service demand, unless TaskStats
// finds they held its threads (its ops overlap them under half as often as chance;
// TaskStats::recv_busy_ns is then 0).
bool IsRecvOpType(std::string_view type);
// Gather, GatherV2, ResourceGather, ...: embedding lookups.
bool IsGatherOpType(std::string_view type);
// SparseApplyAdagrad, ResourceSparseApplyAdam, ...
bool IsSparseApplyOpType(std::string_view type);
// Dense optimizer applies: ApplyAdam, ResourceApplyAdam, ApplyMomentum, ... (not Sparse*).
bool IsDenseApplyOpType(std::string_view type);
// An op whose output a worker receives only as a control input (train_op's): the applies
// (dense, sparse, Scatter*, AssignAdd/Sub) and the accumulators' gradient ops
// (AccumulatorApplyGradient, SparseAccumulatorApplyGradient): their outputs are the variable's
// ref or nothing, so their cross-task edges carry no tensor (a TF1 timeline sizes none of them).
bool IsControlOnlyOpType(std::string_view type);
// Ops that wait for training input: IteratorGetNext, ReaderReadV2, input QueueDequeueMany...
// `name` excludes SyncReplicasOptimizer's token queue.
bool IsInputOp(std::string_view type, std::string_view name);
// tf.data's producer ops (IsInputProducerOpType) are in core/op_kinds.h, included here.
// SyncReplicasOptimizer machinery: accumulators and the sync token queue, by type or by name.
bool IsSyncReplicasOp(std::string_view type, std::string_view name);
bool IsSyncReplicasOpType(std::string_view type);  // the accumulators
bool IsSyncReplicasOpName(std::string_view name);  // sync_token_q, sync_replicas scopes
// SyncReplicasOptimizer's blocking ops (issue 35): a worker's dequeue from the sync token queue
// and the chief's accumulator takes, which wait for the slowest replica (a barrier, not compute).
bool IsSyncWaitOp(std::string_view type, std::string_view name);

}  // namespace tfdiag
