#include "analyzers/op_names.h"

#include <algorithm>
#include <iterator>

#include "core/checked_number.h"

namespace tfdiag {

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool Contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

}  // namespace

bool IsPartitionInput(std::string_view in) {
  size_t i = in.size();
  while (i > 0 && in[i - 1] >= '0' && in[i - 1] <= '9') --i;
  return i < in.size() && i >= 2 && in[i - 1] == 'S' && in[i - 2] == '_';
}

std::string_view InputNode(std::string_view in) {
  if (!in.empty() && in[0] == '^') in.remove_prefix(1);
  if (IsPartitionInput(in)) {
    size_t i = in.size();
    while (in[i - 1] >= '0' && in[i - 1] <= '9') --i;
    in = in.substr(0, i - 2);
  }
  size_t colon = in.rfind(':');
  if (colon != std::string_view::npos) in = in.substr(0, colon);
  return in;
}

std::string_view StripRead(std::string_view node) {
  constexpr std::string_view kRead = "/read";
  if (node.size() > kRead.size() && node.substr(node.size() - kRead.size()) == kRead) {
    return node.substr(0, node.size() - kRead.size());
  }
  return node;
}

std::string_view PartitionBase(std::string_view var, int* part) {
  if (part != nullptr) *part = -1;
  size_t slash = var.rfind('/');
  if (slash == std::string_view::npos) return var;
  std::string_view last = var.substr(slash + 1);
  // At most 9 digits: k fits an int (a workload-controlled name; a longer run is no part index).
  if (!StartsWith(last, "part_") || last.size() == 5 || last.size() > 5 + 9) return var;
  int k = 0;
  for (char c : last.substr(5)) {
    if (c < '0' || c > '9') return var;
    k = k * 10 + (c - '0');
  }
  if (part != nullptr) *part = k;
  return var.substr(0, slash);
}

bool IsVariableOpType(std::string_view t) {
  return t == "VariableV2" || t == "Variable" || t == "VarHandleOp" || t == "_VarHandlesOp" ||
         t == "TemporaryVariable" || t == "MutableHashTableV2" ||
         t == "MutableHashTableOfTensorsV2" || t == "MutableDenseHashTableV2";
}

bool IsVariableUseOpType(std::string_view t) {
  return t == "ReadVariableOp" || t == "ResourceGather" || t == "ResourceGatherNd" ||
         t == "AssignVariableOp" || t == "AssignAddVariableOp" || t == "AssignSubVariableOp" ||
         t == "Assign" || t == "AssignAdd" || t == "AssignSub" || t == "KvResourceGather" ||
         StartsWith(t, "ResourceApply") || StartsWith(t, "ResourceSparseApply") ||
         StartsWith(t, "Apply") || StartsWith(t, "SparseApply") || StartsWith(t, "ScatterUpdate") ||
         StartsWith(t, "ScatterAdd") || StartsWith(t, "ScatterSub") ||
         StartsWith(t, "ResourceScatter");
}

namespace {

// Whether a scope component is an op's own scope: TF's Python API opens a name scope named after
// the op's type when none is given ("GatherV2", "MatMul", "BiasAdd", "Einsum", "Identity",
// numbered "MatMul_1": tensorflow/python/framework/ops.py name_scope; array_ops.gather's
// "GatherV2"), CamelCase; Keras layers, variables and a function's scopes are snake_case
// ("dense", "word_embeddings", "layer_9", "add"), but for Keras optimizers' and tf.Variable's
// names (kNotOps). A layer a user names in CamelCase is taken for an op scope too (its
// variables are then named by the scope above it).
bool IsOpScope(std::string_view c) {
  size_t n = c.size();
  const size_t us = c.rfind('_');
  if (us != std::string_view::npos) {
    if (us + 1 == c.size() || !AllDigits(c.substr(us + 1))) return false;
    n = us;
  }
  if (n < 2 || c[0] < 'A' || c[0] > 'Z') return false;
  bool lower = false;
  for (size_t i = 1; i < n; ++i) {
    const char ch = c[i];
    if (ch >= 'a' && ch <= 'z') {
      lower = true;
    } else if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))) {
      return false;
    }
  }
  if (!lower) return false;
  // CamelCase scopes that hold variables: Keras optimizers' (their iterations and slots:
  // keras/optimizer_v2/*.py class names) and tf.Variable's default name.
  static constexpr std::string_view kNotOps[] = {"Adam", "Adamax",  "Adagrad",  "Adadelta", "Nadam",
                                                 "Ftrl", "RMSprop", "Momentum", "Variable"};
  return std::find(std::begin(kNotOps), std::end(kNotOps), c.substr(0, n)) == std::end(kNotOps);
}

// `scope` less its trailing op scopes ("word_embeddings/GatherV2" -> "word_embeddings"), never
// down to nothing.
std::string_view StripOpScopes(std::string_view scope) {
  for (size_t slash = scope.rfind('/'); slash != std::string_view::npos; slash = scope.rfind('/')) {
    if (!IsOpScope(scope.substr(slash + 1))) break;
    scope = scope.substr(0, slash);
  }
  return scope;
}

}  // namespace

std::string_view StripReplicaScope(std::string_view n) {
  constexpr std::string_view kReplica = "replica_";
  if (!StartsWith(n, kReplica)) return n;
  const size_t slash = n.find('/');
  if (slash == std::string_view::npos ||
      !AllDigits(n.substr(kReplica.size(), slash - kReplica.size()))) {
    return n;
  }
  return n.substr(slash + 1);
}

std::string_view Tf2VariableOfOp(std::string_view node, std::string_view type,
                                 bool* numbered_update) {
  *numbered_update = false;
  node = StripReplicaScope(node);
  if (IsVariableOpType(type)) return node;
  if (StartsWith(type, "ResourceApply") || StartsWith(type, "ResourceSparseApply") ||
      StartsWith(type, "Apply") || StartsWith(type, "SparseApply")) {
    // ".../update_<var>/<Apply>" (TF1: the variable's op name) or ".../update[_<N>]/<Apply>".
    for (size_t at = node.find("update"); at != std::string_view::npos;
         at = node.find("update", at + 1)) {
      if (at > 0 && node[at - 1] != '/') continue;
      const size_t end = node.rfind('/');
      if (end == std::string_view::npos || end < at) break;
      const std::string_view rest = node.substr(at + 6, end - at - 6);
      if (rest.empty() || (rest[0] == '_' && AllDigits(rest.substr(1)))) {
        *numbered_update = true;
        return node.substr(0, end);
      }
      if (rest[0] == '_') return rest.substr(1);
    }
    return "";
  }
  const bool read =
      type == "ReadVariableOp" || type == "ResourceGather" || type == "ResourceGatherNd";
  const bool assign = type == "AssignVariableOp" || type == "AssignAddVariableOp" ||
                      type == "AssignSubVariableOp" || StartsWith(type, "ResourceScatter");
  if (!read && !assign) return "";
  const size_t slash = node.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? node : node.substr(slash + 1);
  const bool sibling = StartsWith(last, type) && last.size() > type.size() &&
                       last[type.size()] == '_' && AllDigits(last.substr(type.size() + 1));
  // Numbered reads in one scope read one variable (a function captures a variable once, named
  // by its first reader: BERT's "ReadVariableOp_1" has no handle of its own); numbered assigns
  // are counters of their own (Keras metrics' "AssignAddVariableOp_<N>" each take a handle).
  if (slash == std::string_view::npos) return read && sibling ? node.substr(0, type.size()) : node;
  if (assign && sibling) return node;
  return StripOpScopes(node.substr(0, slash));
}

bool IsRecvOpType(std::string_view t) {
  return t == "RecvTensor" || t == "_Recv" || t == "_HostRecv";
}

bool IsGatherOpType(std::string_view t) {
  return t == "Gather" || t == "GatherV2" || t == "ResourceGather" || t == "GatherNd" ||
         t == "ResourceGatherNd" || t == "KvResourceGather";
}

bool IsSparseApplyOpType(std::string_view t) { return Contains(t, "SparseApply"); }

bool IsDenseApplyOpType(std::string_view t) {
  return (StartsWith(t, "Apply") || StartsWith(t, "ResourceApply")) && !Contains(t, "Sparse");
}

bool IsControlOnlyOpType(std::string_view t) {
  return IsDenseApplyOpType(t) || IsSparseApplyOpType(t) || StartsWith(t, "Scatter") ||
         StartsWith(t, "ResourceScatter") || t == "AssignAdd" || t == "AssignSub" ||
         t == "AssignAddVariableOp" || t == "AssignSubVariableOp" ||
         t == "AccumulatorApplyGradient" || t == "SparseAccumulatorApplyGradient";
}

bool IsInputOp(std::string_view t, std::string_view name) {
  if (t == "IteratorGetNext" || t == "IteratorGetNextSync" || t == "IteratorGetNextAsOptional" ||
      t == "MultiDeviceIteratorGetNextFromShard" || t == "ReaderReadV2" || t == "ReaderRead" ||
      t == "ReaderReadUpToV2" || t == "ReaderReadUpTo") {
    return true;
  }
  // Input pipelines of TF1 queue runners (batch/fifo_queue, input_producer).
  return StartsWith(t, "QueueDequeue") && !IsSyncReplicasOp(t, name);
}

bool IsSyncReplicasOpType(std::string_view t) {
  return t == "AccumulatorApplyGradient" || t == "AccumulatorTakeGradient" ||
         t == "SparseAccumulatorApplyGradient" || t == "SparseAccumulatorTakeGradient" ||
         t == "ConditionalAccumulator" || t == "SparseConditionalAccumulator";
}

bool IsSyncReplicasOpName(std::string_view name) {
  return Contains(name, "sync_token_q") || Contains(name, "sync_replicas");
}

bool IsSyncWaitOp(std::string_view t, std::string_view name) {
  if (t == "AccumulatorTakeGradient" || t == "SparseAccumulatorTakeGradient") return true;
  return StartsWith(t, "QueueDequeue") && Contains(name, "sync_token_q");
}

bool IsSyncReplicasOp(std::string_view t, std::string_view name) {
  return IsSyncReplicasOpType(t) || IsSyncReplicasOpName(name);
}

}  // namespace tfdiag
