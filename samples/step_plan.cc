// Builds one worker's step plan: every op the worker and the PS tasks serving it run in one
// training step, with TensorFlow's node names, op types and cross-device input names.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "samples/model_internal.h"

namespace tfdiag::sim::internal {
namespace {

Cost Fixed(int64_t ns, int64_t latency = 1 * kUs) {
  Cost c;
  c.base_ns = ns;
  c.latency_ns = latency;
  return c;
}

Cost Compute(double weight) {
  Cost c;
  c.base_ns = 3 * kUs;
  c.weight = weight;
  c.latency_ns = 2 * kUs;
  c.jitter = 0.05f;
  return c;
}

Cost Frac(double step_frac, int64_t latency) {
  Cost c;
  c.step_frac = step_frac;
  c.latency_ns = latency;
  return c;
}

TensorShape F32(std::vector<int64_t> dims) { return TensorShape{"DT_FLOAT", std::move(dims), 4}; }
TensorShape I64(std::vector<int64_t> dims) { return TensorShape{"DT_INT64", std::move(dims), 8}; }
TensorShape VarShape(const Var& v) { return v.elem_bytes == 8 ? I64(v.dims) : F32(v.dims); }

// "name:k" for output k > 0, "name" for output 0 (TF's input naming).
std::string Port(const std::string& name, int k) {
  return k == 0 ? name : fmt::format("{}:{}", name, k);
}
// "name_k" for k > 0, "name" for k == 0 (TF's unique op naming).
std::string Nth(const std::string& name, int k) {
  return k == 0 ? name : fmt::format("{}_{}", name, k);
}

// Appends ops to a StepPlan and their templates to the Model.
class PlanBuilder {
 public:
  PlanBuilder(Model& m, StepPlan& plan, RecvNames& names) : m_(m), plan_(plan), names_(names) {}

  // Adds op `type` named `node` on device `dev`; returns its index in the plan.
  int Op(int dev, std::string_view type, const std::string& node,
         const std::vector<std::string>& inputs, const Cost& cost, const std::vector<int>& deps,
         const std::vector<TensorShape>& outs = {}, bool gputrace = false) {
    m_.templates.push_back(
        RenderOp(m_.cfg, m_.devices[dev], dev, type, node, inputs, outs, gputrace));
    PlanOp op;
    op.tmpl = static_cast<int>(m_.templates.size()) - 1;
    op.cost = cost;
    op.dep_begin = static_cast<int>(plan_.deps.size());
    for (int d : deps) {
      if (d >= 0) plan_.deps.push_back(d);
    }
    op.dep_end = static_cast<int>(plan_.deps.size());
    plan_.ops.push_back(op);
    plan_.total_weight += cost.weight;
    return static_cast<int>(plan_.ops.size()) - 1;
  }

  // A kernel or memcpy record on a GPU stream device.
  int Gpu(int dev, std::string_view type, const std::string& node, const Cost& cost,
          const std::vector<int>& deps) {
    return Op(dev, type, node, {}, cost, deps, {}, true);
  }

  // The name under which device `dst` sees `tensor` produced on another device.
  std::string Remote(const std::string& tensor, int dst) {
    auto [it, inserted] = names_.ids.emplace(fmt::format("{}@{}", tensor, dst), names_.next);
    if (inserted) names_.next += 2;  // TF numbers Send and Recv alike: S1, S3, S5, ...
    size_t colon = tensor.rfind(':');
    std::string node = colon == std::string::npos ? tensor : tensor.substr(0, colon);
    return fmt::format("{}_S{}", node, it->second);
  }

  int NextEdge() { return names_.next_edge++; }

  // A RecvTensor on `dev` of `bytes` produced by plan op `producer`; the template keeps what a
  // RunMetadata label says of it ("[<N>B] edge_<id>_<node> from <src> to <dst>").
  int Recv(int dev, int64_t bytes, int64_t latency, int producer) {
    const int r =
        Op(dev, "RecvTensor", "RecvTensor", {}, Fixed(RecvNs(bytes), latency), {producer});
    OpTemplate& t = m_.templates[plan_.ops[r].tmpl];
    t.recv_bytes = bytes;
    if (producer >= 0) {
      const OpTemplate& p = m_.templates[plan_.ops[producer].tmpl];
      t.recv_src = p.device;
      t.recv_edge = fmt::format("edge_{}_{}", plan_.ops[r].tmpl, p.node);
    }
    return r;
  }

  // Draws a DataFlow arrow from `producer` to `consumer`.
  void Flow(int consumer, int producer) {
    if (consumer >= 0 && producer >= 0) plan_.ops[consumer].flow_from = producer;
  }

 private:
  Model& m_;
  StepPlan& plan_;
  RecvNames& names_;
};

// A gradient tensor produced on the worker for one variable.
struct Grad {
  int op;
  std::string tensor;
  int64_t bytes;
};

}  // namespace

void BuildStepPlan(Model& m, const Vars& vs, const DeviceIndex& dx, int w, RecvNames& names) {
  const Config& c = m.cfg;
  StepPlan& plan = m.plans[w];
  plan.worker = w;
  double factor = w == c.straggler ? c.straggler_factor : 1.0;
  plan.step_ns = static_cast<int64_t>(c.step_ms * 1e6 * factor);
  PlanBuilder b(m, plan, names);
  const int W = dx.worker[w];
  const int64_t B = c.batch, dim = c.emb_dim;
  const int64_t ids = c.sparse ? B * c.ids_per_example : 0;
  const int parts = c.sparse ? c.emb_parts : 0;
  const int64_t rows_k = parts > 0 ? ids / parts : 0;  // ids gathered per embedding part
  const size_t nv = vs.v.size();
  auto PS = [&dx](int p) { return dx.ps[p]; };

  // 1. Step start: _SOURCE on every device, then variable handles and reads on the PS.
  int src_w = b.Op(W, "NoOp", "_SOURCE", {}, Fixed(2 * kUs, 0), {});
  // Config::worker_gpu: the GPU's executor starts its partition ~1 ms after the CPU's (the gap a
  // CPU+GPU task's _SOURCE ops show in real TF1 timelines); the MatMuls run there, after it.
  const int G = dx.worker_gpu.empty() ? W : dx.worker_gpu[w];
  const int src_g = G == W ? -1 : b.Op(G, "NoOp", "_SOURCE", {}, Fixed(2 * kUs, 1000 * kUs), {});
  std::vector<int> last(c.ps, -2);  // last op of the PS setup chain; -2: PS unused
  for (const Var& v : vs.v) last[v.ps] = -1;
  for (int p = 0; p < c.ps; ++p) {
    if (last[p] == -1) {
      last[p] = b.Op(PS(p), "NoOp", "_SOURCE", {}, Fixed(2 * kUs, (20 + 4 * p) * kUs), {});
    }
  }
  std::vector<int> var_op(nv, -1), read_op(nv, -1);
  for (size_t i = 0; i < nv; ++i) {
    const Var& v = vs.v[i];
    var_op[i] = b.Op(PS(v.ps), "VariableV2", v.name, {}, Fixed(3 * kUs), {last[v.ps]});
    last[v.ps] = var_op[i];
    if (v.read) {
      read_op[i] = b.Op(PS(v.ps), "Identity", v.name + "/read", {v.name}, Fixed(2 * kUs),
                        {var_op[i]}, {VarShape(v)});
      last[v.ps] = read_op[i];
    }
  }
  // SyncReplicasOptimizer: one accumulator per trainable variable (dense ones first, so the
  // first, "sync_replicas/conditional_accumulator", is dense) and the token queue.
  std::vector<int> acc_op(nv, -1);
  std::vector<std::string> acc_name(nv);
  int queue_op = -1;
  const int gs_ps = vs.v[vs.global_step].ps;
  if (c.sync_replicas) {
    int n = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < nv; ++i) {
        const Var& v = vs.v[i];
        bool emb = v.kind == VarKind::kEmbedding;
        if (!v.trainable || emb != (pass == 1)) continue;
        acc_name[i] = Nth("sync_replicas/conditional_accumulator", n++);
        acc_op[i] = b.Op(PS(v.ps), emb ? "SparseConditionalAccumulator" : "ConditionalAccumulator",
                         acc_name[i], {}, Fixed(3 * kUs), {last[v.ps]});
        last[v.ps] = acc_op[i];
      }
    }
    queue_op = b.Op(PS(gs_ps), "FIFOQueueV2", "sync_replicas/sync_token_q", {}, Fixed(3 * kUs),
                    {last[gs_ps]});
  }

  // 2. Input pipeline.
  std::vector<TensorShape> ign_out;
  if (c.sparse) {
    ign_out = {I64({B, c.ids_per_example}), F32({B, 1})};
  } else {
    ign_out = {F32({B, c.dense_input}), F32({B, 1})};
  }
  int ign = b.Op(W, "IteratorGetNext", "IteratorGetNext", {"IteratorV2"}, Frac(c.ign_frac, 3 * kUs),
                 {src_w}, ign_out);

  // 3. Variable fetch: one RecvTensor on the worker per variable it reads.
  std::vector<int> recv(nv, -1);
  std::vector<int> sent(c.ps, 0);  // transfers per PS so far: the PS serializes its sends
  for (size_t i = 0; i < nv; ++i) {
    const Var& v = vs.v[i];
    bool needed = v.kind == VarKind::kKernel || v.kind == VarKind::kBias ||
                  (v.kind == VarKind::kEmbedding && c.gather_on_worker);
    if (!needed) continue;
    int64_t lat = (15 + 40 * sent[v.ps]++) * kUs;
    recv[i] = b.Recv(W, v.bytes(), lat, read_op[i]);
  }

  // 4. Embedding lookup.
  const std::string lk = "embedding/embedding_lookup/";
  std::vector<int> gather_ps(parts, -1);
  int x_op = ign;
  std::string x = "IteratorGetNext";
  std::vector<TensorShape> x_shape = {F32({B, c.ids_per_example * dim})};
  if (c.sparse && c.gather_on_worker) {
    std::vector<int> gathers;
    std::vector<std::string> gnames;
    for (int k = 0; k < parts; ++k) {
      const Var& v = vs.v[vs.emb[k]];
      std::string g = Nth("embedding/Gather", k);
      int op = b.Op(
          W, "GatherV2", g, {b.Remote(v.name + "/read", W), "IteratorGetNext", g + "/axis"},
          Fixed(GatherNs(rows_k, dim, v.dims[0])), {recv[vs.emb[k]], ign}, {F32({rows_k, dim})});
      b.Flow(op, read_op[vs.emb[k]]);
      gathers.push_back(op);
      gnames.push_back(g);
    }
    int joined = gathers[0];
    std::string jname = gnames[0];
    if (parts > 1) {
      gnames.push_back("embedding/concat/axis");
      jname = "embedding/concat";
      joined = b.Op(W, "ConcatV2", jname, gnames, Fixed(10 * kUs + ids * dim * 2), gathers,
                    {F32({ids, dim})});
    }
    x_op = b.Op(W, "Reshape", "embedding/Reshape", {jname, "embedding/Reshape/shape"},
                Fixed(5 * kUs), {joined}, x_shape);
  } else if (c.sparse && parts == 1) {
    int i = vs.emb[0];
    int P = PS(vs.v[i].ps);
    int r = b.Recv(P, ids * 8, 15 * kUs, ign);
    int g = b.Op(P, "GatherV2", "embedding/embedding_lookup",
                 {"embedding/embedding_weights/read", b.Remote("IteratorGetNext", P),
                  "embedding/embedding_lookup/axis"},
                 Fixed(GatherNs(ids, dim, c.emb_rows)), {r, read_op[i]}, {F32({ids, dim})});
    b.Flow(g, ign);
    gather_ps[0] = g;
    int wr = b.Recv(W, ids * dim * 4, 15 * kUs, g);
    x_op = b.Op(W, "Reshape", "embedding/Reshape",
                {b.Remote("embedding/embedding_lookup", W), "embedding/Reshape/shape"},
                Fixed(5 * kUs), {wr}, x_shape);
    b.Flow(x_op, g);
  } else if (c.sparse) {
    int fm = b.Op(W, "FloorMod", lk + "FloorMod", {"IteratorGetNext", lk + "FloorMod/y"},
                  Fixed(5 * kUs + ids), {ign}, {I64({ids})});
    int fd = b.Op(W, "FloorDiv", lk + "floordiv", {"IteratorGetNext", lk + "floordiv/y"},
                  Fixed(5 * kUs + ids), {fm}, {I64({ids})});
    int cast = b.Op(W, "Cast", lk + "Cast", {lk + "FloorMod"}, Fixed(3 * kUs + ids / 2), {fd});
    int dp = b.Op(W, "DynamicPartition", lk + "DynamicPartition", {lk + "floordiv", lk + "Cast"},
                  Fixed(8 * kUs + ids * 2), {cast}, {I64({rows_k})});
    int dp1 = b.Op(W, "DynamicPartition", lk + "DynamicPartition_1", {lk + "range", lk + "Cast"},
                   Fixed(8 * kUs + ids * 2), {dp});
    std::vector<std::string> stitch_in;
    for (int k = 0; k < parts; ++k) stitch_in.push_back(Port(lk + "DynamicPartition_1", k));
    std::vector<int> ready = {dp1};
    for (int k = 0; k < parts; ++k) {
      const Var& v = vs.v[vs.emb[k]];
      int P = PS(v.ps);
      std::string g = Nth(lk + "GatherV2", k);
      int r = b.Recv(P, rows_k * 8, 15 * kUs, dp);
      gather_ps[k] = b.Op(
          P, "GatherV2", g,
          {v.name + "/read", b.Remote(Port(lk + "DynamicPartition", k), P), g + "/axis"},
          Fixed(GatherNs(rows_k, dim, c.emb_rows)), {r, read_op[vs.emb[k]]}, {F32({rows_k, dim})});
      b.Flow(gather_ps[k], dp);
      ready.push_back(b.Recv(W, rows_k * dim * 4, 15 * kUs, gather_ps[k]));
      stitch_in.push_back(b.Remote(g, W));
    }
    int st = b.Op(W, "ParallelDynamicStitch", "embedding/embedding_lookup", stitch_in,
                  Fixed(10 * kUs + ids * dim * 2), ready, {F32({ids, dim})});
    b.Flow(st, gather_ps[0]);
    x_op = b.Op(W, "Reshape", "embedding/Reshape",
                {"embedding/embedding_lookup", "embedding/Reshape/shape"}, Fixed(5 * kUs), {st},
                x_shape);
  }
  if (c.sparse) x = "embedding/Reshape";

  // 5. Forward pass: dense layers, logits, loss.
  const int L = c.dense_layers;
  std::vector<std::string> kin(L + 1), act_in(L + 1);
  std::string act = x;
  int act_op = x_op;
  for (int l = 0; l <= L; ++l) {
    std::string scope = l == L ? std::string("logits") : fmt::format("dense_{}", l + 1);
    int64_t in = vs.in_dim[l], out = vs.out_dim[l];
    const std::vector<int>& kp = vs.kernel[l];
    int k_op;
    if (kp.size() > 1) {  // PartitionedVariable: concat the parts once all arrived
      std::vector<std::string> names_in;
      std::vector<int> deps;
      for (int i : kp) {
        names_in.push_back(b.Remote(vs.v[i].name + "/read", W));
        deps.push_back(recv[i]);
      }
      names_in.push_back(scope + "/kernel/ConcatPartitions/concat/axis");
      kin[l] = scope + "/kernel/ConcatPartitions/concat";
      k_op =
          b.Op(W, "ConcatV2", kin[l], names_in, Fixed(8 * kUs + in * out), deps, {F32({in, out})});
    } else {
      kin[l] = b.Remote(vs.v[kp[0]].name + "/read", W);
      k_op = recv[kp[0]];
    }
    act_in[l] = act;
    int mm = b.Op(G, "MatMul", scope + "/MatMul", {act, kin[l]}, Compute(2.0 * B * in * out),
                  {act_op, k_op, src_g}, {F32({B, out})});
    if (kp.size() == 1) b.Flow(mm, read_op[kp[0]]);
    act_op = b.Op(W, "BiasAdd", scope + "/BiasAdd",
                  {scope + "/MatMul", b.Remote(scope + "/bias/read", W)}, Compute(8.0 * B * out),
                  {mm, recv[vs.bias[l]]}, {F32({B, out})});
    act = scope + "/BiasAdd";
    if (l < L) {
      act_op = b.Op(W, "Relu", scope + "/Relu", {act}, Compute(8.0 * B * out), {act_op},
                    {F32({B, out})});
      act = scope + "/Relu";
    }
  }
  const std::string ll = "loss/logistic_loss/";
  int op = b.Op(W, "Mul", ll + "mul", {act, "IteratorGetNext:1"}, Compute(32.0 * B), {act_op},
                {F32({B, 1})});
  op = b.Op(W, "Log1p", ll + "Log1p", {ll + "mul"}, Compute(32.0 * B), {op}, {F32({B, 1})});
  op = b.Op(W, "Mean", "loss/Mean", {ll + "Log1p", "loss/Const"}, Compute(32.0 * B), {op},
            {F32({})});

  // 6. Backward pass.
  op = b.Op(W, "Fill", "gradients/Fill", {"gradients/Shape", "gradients/grad_ys_0"}, Fixed(3 * kUs),
            {op}, {F32({})});
  op = b.Op(W, "RealDiv", "gradients/loss/Mean_grad/truediv",
            {"gradients/loss/Mean_grad/Tile", "gradients/loss/Mean_grad/Cast"}, Compute(32.0 * B),
            {op}, {F32({B, 1})});
  op = b.Op(W, "Mul", "gradients/" + ll + "Log1p_grad/mul",
            {"gradients/loss/Mean_grad/truediv", "gradients/" + ll + "Log1p_grad/Reciprocal"},
            Compute(32.0 * B), {op}, {F32({B, 1})});
  std::string up = "gradients/" + ll + "mul_grad/Mul";
  int up_op = b.Op(W, "Mul", up, {"gradients/" + ll + "Log1p_grad/mul", "IteratorGetNext:1"},
                   Compute(32.0 * B), {op}, {F32({B, 1})});
  std::vector<std::vector<Grad>> grads(nv);
  std::vector<std::string> dense_grad(nv);  // kDenseAdam: IndexedSlices densified on the PS
  for (int l = L; l >= 0; --l) {
    std::string scope = l == L ? std::string("logits") : fmt::format("dense_{}", l + 1);
    std::string gs = "gradients/" + scope;
    int64_t in = vs.in_dim[l], out = vs.out_dim[l];
    std::string pre = up;
    int pre_op = up_op;
    if (l < L) {
      pre = gs + "/Relu_grad/ReluGrad";
      pre_op = b.Op(W, "ReluGrad", pre, {up, scope + "/Relu"}, Compute(8.0 * B * out), {up_op},
                    {F32({B, out})});
    }
    std::string bgn = gs + "/BiasAdd_grad/BiasAddGrad";
    int bg = b.Op(W, "BiasAddGrad", bgn, {pre}, Compute(4.0 * B * out), {pre_op}, {F32({out})});
    grads[vs.bias[l]].push_back({bg, bgn, out * 4});
    std::string kgn = gs + "/MatMul_grad/MatMul_1";
    int kg = b.Op(G, "MatMul", kgn, {act_in[l], pre}, Compute(2.0 * B * in * out), {bg},
                  {F32({in, out})});
    const std::vector<int>& kp = vs.kernel[l];
    if (kp.size() > 1) {  // the concat's gradient: one Slice per partition
      std::string cg = "gradients/" + scope + "/kernel/ConcatPartitions/concat_grad/";
      int prev = b.Op(W, "ConcatOffset", cg + "ConcatOffset",
                      {scope + "/kernel/ConcatPartitions/concat/axis", cg + "ShapeN"},
                      Fixed(3 * kUs), {kg});
      for (size_t j = 0; j < kp.size(); ++j) {
        const Var& part = vs.v[kp[j]];
        int k = static_cast<int>(j);
        std::string s = Nth(cg + "Slice", k);
        prev = b.Op(W, "Slice", s, {kgn, Port(cg + "ConcatOffset", k), Port(cg + "ShapeN", k)},
                    Fixed(2 * kUs + part.bytes() / 8), {prev}, {F32(part.dims)});
        grads[kp[j]].push_back({prev, s, part.bytes()});
      }
    } else {
      grads[kp[0]].push_back({kg, kgn, in * out * 4});
    }
    if (l > 0 || c.sparse) {
      up = gs + "/MatMul_grad/MatMul";
      up_op =
          b.Op(G, "MatMul", up, {pre, kin[l]}, Compute(2.0 * B * in * out), {kg}, {F32({B, in})});
    }
  }
  if (c.sparse) {
    std::string rgn = "gradients/embedding/Reshape_grad/Reshape";
    int prev = b.Op(W, "Reshape", rgn, {up, "gradients/embedding/Reshape_grad/Shape"},
                    Fixed(4 * kUs), {up_op}, {F32({ids, dim})});
    for (int k = 0; k < parts; ++k) {
      int i = vs.emb[k];
      std::string src = rgn, gscope, idx_src;
      int64_t rows = rows_k;
      if (c.gather_on_worker) {
        gscope = "gradients/" + Nth("embedding/Gather", k) + "_grad/";
        idx_src = "IteratorGetNext";
        if (parts > 1) {
          src = Nth("gradients/embedding/concat_grad/Slice", k);
          prev = b.Op(W, "Slice", src,
                      {rgn, Port("gradients/embedding/concat_grad/ConcatOffset", k),
                       Port("gradients/embedding/concat_grad/ShapeN", k)},
                      Fixed(3 * kUs + rows * dim), {prev}, {F32({rows, dim})});
        }
      } else if (parts == 1) {
        gscope = "gradients/embedding/embedding_lookup_grad/";
        idx_src = "IteratorGetNext";
      } else {
        src = Nth("gradients/embedding/embedding_lookup_grad/GatherV2", k);
        prev = b.Op(W, "GatherV2", src, {rgn, Port(lk + "DynamicPartition_1", k), src + "/axis"},
                    Fixed(5 * kUs + rows * dim * 2), {prev}, {F32({rows, dim})});
        gscope = "gradients/" + Nth(lk + "GatherV2", k) + "_grad/";
        idx_src = Port(lk + "DynamicPartition", k);
      }
      int vals = b.Op(W, "Reshape", gscope + "Reshape", {src, gscope + "concat"}, Fixed(4 * kUs),
                      {prev}, {F32({rows, dim})});
      int idx = b.Op(W, "Reshape", gscope + "Reshape_1", {idx_src, gscope + "ExpandDims"},
                     Fixed(3 * kUs), {vals}, {I64({rows})});
      prev = idx;
      grads[i].push_back({vals, gscope + "Reshape", rows * dim * 4});
      grads[i].push_back({idx, gscope + "Reshape_1", rows * 8});
      dense_grad[i] = gscope + "UnsortedSegmentSum";
    }
  }

  // 7. Gradients travel to the PS and are applied there.
  const bool chief = w == 0;
  std::vector<int> applies, acc_applies;
  auto apply = [&](size_t i, const std::vector<std::string>& gin, std::vector<int> deps) {
    const Var& v = vs.v[i];
    int P = PS(v.ps);
    std::string type, name;
    std::vector<std::string> in;
    int64_t ns;
    if (v.kind == VarKind::kEmbedding && c.emb_opt == EmbeddingOptimizer::kDenseAdam) {
      type = "ApplyAdam";
      name = "Adam/update_" + v.name + "/ApplyAdam";
      in = {v.name, v.name + "/Adam", v.name + "/Adam_1"};
      for (int bp : vs.beta_power) {
        std::string rn = vs.v[bp].name + "/read";
        in.push_back(vs.v[bp].ps == v.ps ? rn : b.Remote(rn, P));
        deps.push_back(read_op[bp]);
      }
      for (const char* s : {"Adam/learning_rate", "Adam/beta1", "Adam/beta2", "Adam/epsilon"}) {
        in.push_back(s);
      }
      in.push_back(gin[0]);
      ns = AdamNs(v.bytes());
    } else if (v.kind == VarKind::kEmbedding) {
      type = "SparseApplyAdagrad";
      name = "Adagrad/update_" + v.name + "/SparseApplyAdagrad";
      in = {v.name, v.name + "/Adagrad", "Adagrad/learning_rate", gin[0], gin[1]};
      ns = SparseApplyNs(parts == 1 ? ids : rows_k, dim);
    } else {
      type = "ApplyGradientDescent";
      name = "GradientDescent/update_" + v.name + "/ApplyGradientDescent";
      in = {v.name, "GradientDescent/learning_rate", gin[0]};
      ns = DenseApplyNs(v.bytes());
    }
    int stream = dx.stream[v.ps];
    if (stream < 0) return b.Op(P, type, name, in, Fixed(ns, 3 * kUs), deps);
    int launch = b.Op(P, type, name, in, Fixed(8 * kUs, 3 * kUs), deps);
    return b.Gpu(stream, type, name, Fixed(3 * kUs + ns / 20, 4 * kUs), {launch});
  };
  for (size_t i = 0; i < nv; ++i) {
    const Var& v = vs.v[i];
    if (!v.trainable) continue;
    int P = PS(v.ps);
    std::vector<int> ready = {var_op[i]};
    std::vector<std::string> gin;
    for (const Grad& g : grads[i]) {
      int r = b.Recv(P, g.bytes, 15 * kUs, g.op);
      if (dx.stream[v.ps] >= 0) {
        r = b.Gpu(dx.stream[v.ps], "MEMCPYHtoD", fmt::format("edge_{}_{}", b.NextEdge(), g.tensor),
                  Fixed(MemcpyNs(g.bytes), 3 * kUs), {r});
      }
      ready.push_back(r);
      gin.push_back(b.Remote(g.tensor, P));
    }
    bool emb = v.kind == VarKind::kEmbedding;
    if (emb && c.emb_opt == EmbeddingOptimizer::kDenseAdam) {
      // colocate_gradients_with_ops: the gather's gradient is made dense next to the variable.
      int uss = b.Op(P, "UnsortedSegmentSum", dense_grad[i],
                     {gin[0], gin[1], dense_grad[i] + "/strided_slice"},
                     Fixed(10 * kUs + v.bytes() / 10, 3 * kUs), ready, {F32(v.dims)});
      b.Flow(uss, grads[i][0].op);
      gin = {dense_grad[i]};
      ready = {uss, var_op[i]};
    }
    if (!c.sync_replicas) {
      applies.push_back(apply(i, gin, ready));
      if (emb && gin.size() > 1) b.Flow(applies.back(), grads[i][0].op);
      continue;
    }
    std::string type = emb ? "SparseAccumulatorApplyGradient" : "AccumulatorApplyGradient";
    std::vector<std::string> in = {acc_name[i], b.Remote("sync_rep_local_step/read", P)};
    in.insert(in.end(), gin.begin(), gin.end());
    ready.push_back(acc_op[i]);
    int64_t ns = emb ? 10 * kUs + rows_k * dim * 4 : DenseApplyNs(v.bytes());
    int a = b.Op(P, type, acc_name[i] + "/" + type, in, Fixed(ns, 3 * kUs), ready);
    acc_applies.push_back(a);
    if (chief) {  // the chief takes the aggregated gradient and applies it
      std::string take_type = emb ? "SparseAccumulatorTakeGradient" : "AccumulatorTakeGradient";
      std::string take = acc_name[i] + "/" + take_type;
      int t = b.Op(P, take_type, take,
                   {acc_name[i], "sync_replicas/AccumulatorTakeGradient/num_required"},
                   Fixed(ns, 5 * kUs), {a});
      std::vector<std::string> tin = {take};
      if (emb) tin.push_back(take + ":1");
      applies.push_back(apply(i, tin, {t, var_op[i]}));
    }
  }
  if (!c.sync_replicas || chief) {
    const int gsi = vs.global_step;
    std::vector<int> deps = applies;
    deps.push_back(var_op[gsi]);
    int gs =
        b.Op(PS(gs_ps), "AssignAdd", "GradientDescent", {"global_step", "GradientDescent/value"},
             Fixed(4 * kUs, 10 * kUs), deps, {I64({})});
    for (size_t k = 0; k < vs.beta_power.size(); ++k) {
      const Var& bp = vs.v[vs.beta_power[k]];
      std::string mul = Nth("Adam/mul", static_cast<int>(k));
      int mop =
          b.Op(PS(bp.ps), "Mul", mul, {bp.name + "/read", k == 0 ? "Adam/beta1" : "Adam/beta2"},
               Fixed(3 * kUs, 5 * kUs), applies, {F32({})});
      b.Op(PS(bp.ps), "Assign", Nth("Adam/Assign", static_cast<int>(k)), {bp.name, mul},
           Fixed(3 * kUs), {mop}, {F32({})});
    }
    if (c.sync_replicas) {
      b.Op(PS(gs_ps), "QueueEnqueueManyV2", "sync_replicas/sync_token_q_EnqueueMany",
           {"sync_replicas/sync_token_q", "sync_replicas/Fill"}, Fixed(8 * kUs, 5 * kUs),
           {gs, queue_op});
    }
  }
  for (size_t i = 0; i < nv; ++i) {  // idle PS streaming counters
    const Var& v = vs.v[i];
    if (v.kind != VarKind::kCounter) continue;
    b.Op(PS(v.ps), "AssignAdd", v.name + "/AssignAdd", {v.name, v.name + "/value"},
         Fixed(3 * kUs, 5 * kUs), {read_op[i]}, {I64({})});
  }
  if (c.sync_replicas) {  // workers wait for a token from the chief
    b.Op(W, "QueueDequeueV2", "sync_replicas/sync_token_q_Dequeue",
         {b.Remote("sync_replicas/sync_token_q", W)}, Frac(0.25, 10 * kUs), acc_applies);
  }
  // train_op = tf.group(...): a NoOp on the worker that ends the step once everything ran.
  std::vector<bool> consumed(plan.ops.size(), false);
  for (int d : plan.deps) consumed[d] = true;
  std::vector<int> leaves;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    if (!consumed[i]) leaves.push_back(static_cast<int>(i));
  }
  b.Op(W, "NoOp", "group_deps", {}, Fixed(2 * kUs, 15 * kUs), leaves);
}

}  // namespace tfdiag::sim::internal
