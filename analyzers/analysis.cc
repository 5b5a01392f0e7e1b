#include "analyzers/analysis.h"

#include <algorithm>

#include "analyzers/allreduce_candidate.h"
#include "analyzers/applicability.h"
#include "analyzers/cpu_pinning.h"
#include "analyzers/cpu_qos.h"
#include "analyzers/cpu_starvation.h"
#include "analyzers/dense_apply_on_embedding.h"
#include "analyzers/deployment_match.h"
#include "analyzers/gather_on_worker.h"
#include "analyzers/grouping.h"
#include "analyzers/hot_ps.h"
#include "analyzers/hot_ps_floor.h"
#include "analyzers/idle_ps.h"
#include "analyzers/input_bound.h"
#include "analyzers/input_consistency.h"
#include "analyzers/k8s_ignore.h"
#include "analyzers/k8s_live_mismatch.h"
#include "analyzers/oversharding.h"
#include "analyzers/ps_colocation.h"
#include "analyzers/ps_count_saturated.h"
#include "analyzers/ps_count_spread.h"
#include "analyzers/ps_cpu_imbalance.h"
#include "analyzers/ps_cpu_quota.h"
#include "analyzers/ps_links_convoy.h"
#include "analyzers/ps_on_gpu.h"
#include "analyzers/ps_worker_ratio.h"
#include "analyzers/replay.h"
#include "analyzers/slow_ps_host.h"
#include "analyzers/slow_ps_link.h"
#include "analyzers/step_breakdown.h"
#include "analyzers/straggler_worker.h"
#include "analyzers/sync_replicas.h"
#include "analyzers/thread_config.h"
#include "analyzers/thread_oversubscription.h"
#include "analyzers/worker_wait.h"

namespace tfdiag {

namespace {

// The rule of `analyzer` in `rules` (enabled or not: a disabled rule's thresholds still say what
// its model reads), else in the built-in set (a rules file that replaced the set without it);
// nullptr where neither has one.
const Rule* RuleOfAnalyzer(const RuleSet& rules, std::string_view analyzer) {
  for (const Rule& r : rules.rules) {
    if (r.analyzer == analyzer) return &r;
  }
  static const StatusOr<RuleSet> builtin = DefaultRuleSet();
  if (!builtin.ok()) return nullptr;
  for (const Rule& r : builtin->rules) {
    if (r.analyzer == analyzer) return &r;
  }
  return nullptr;
}

// The thresholds ComputeImpacts and the outlook read (ImpactRules, analyzers/replay.h), from the
// rules that state them: hot-ps's saturated_busy_pct; ps-worker-ratio's cpu_bound_* and
// convoy_* and spread_* params (PsCpuBoundLimitsOf, ConvoyLimitsOf, SpreadLimitsOf). One a rule
// lacks keeps ImpactRules' refusing default.
void ReadImpactThresholds(const RuleSet& rules, ImpactRules* out) {
  if (const Rule* r = RuleOfAnalyzer(rules, "hot_ps")) {
    if (const RuleParam* p = r->FindParam("saturated_busy_pct")) {
      out->saturated_busy = p->value / 100;
    }
  }
  if (const Rule* r = RuleOfAnalyzer(rules, "ps_worker_ratio")) {
    out->cpu_bound = PsCpuBoundLimitsOf(*r);
    out->convoy = ConvoyLimitsOf(*r);
    out->spread = SpreadLimitsOf(*r);
  }
}

}  // namespace

const std::vector<AnalyzerInfo>& Analyzers() {
  static const std::vector<AnalyzerInfo> kAnalyzers = {
      {"hot_ps",
       &RunHotPsWithFloor,
       {"min_ps", "min_share_over_fair", "min_ratio_to_next", "min_total_ps_busy_us",
        "variables_share", "min_variable_share", "bytes_min_share_over_fair",
        "bytes_min_ratio_to_next", "bytes_min_total_mb", "saturated_busy_pct", "near_limit_pct",
        "far_limit_pct", "profile_far_limit_pct", "nic_gbps"},
       false,
       false,
       false,
       &HotPsFix},
      {"idle_ps",
       &RunIdlePs,
       {"min_ps", "max_fraction_of_hottest", "outlier_ratio", "min_total_ps_busy_us"},
       false,
       false,
       false,
       &IdlePsFix},
      {"slow_ps_host",
       &RunSlowPsHost,
       {"min_ps", "min_total_ps_busy_us", "like_size_ratio", "min_sized_ops", "min_slowdown",
        "min_busy_pct"},
       false,
       false,
       false,
       &SlowPsHostFix},
      {"slow_ps_link",
       &RunSlowPsLink,
       {"min_ps", "min_total_ps_busy_us", "like_size_ratio", "min_sized_ops", "min_slowdown",
        "min_busy_pct", "min_blocking_ratio"},
       true,
       false,
       false,
       &SlowPsLinkFix},
      {"ps_worker_ratio",
       &RunPsWorkerRatio,
       {"sparse_min_workers_per_ps", "sparse_max_workers_per_ps", "dense_min_workers_per_ps",
        "dense_max_workers_per_ps"},
       false,
       false,
       false,
       &PsWorkerRatioFix},
      {"dense_apply_on_embedding",
       &RunDenseApplyOnEmbedding,
       {"min_apply_share_pct"},
       false,
       false,
       false,
       &DenseApplyOnEmbeddingFix},
      {"gather_on_worker",
       &RunGatherOnWorker,
       {"min_gathers"},
       false,
       false,
       false,
       &GatherOnWorkerFix},
      {"oversharding",
       &RunOversharding,
       {"min_parts", "max_shards_per_ps"},
       false,
       false,
       false,
       &OvershardingFix},
      {"sync_replicas",
       &RunSyncReplicas,
       {"min_worker_share_pct", "max_busy_after_pct", "max_held_tail_pct",
        "high_max_held_tail_pct"},
       false,
       false,
       false,
       &SyncReplicasFix},
      {"input_bound",
       &RunInputBound,
       {"moderate_pct", "high_pct", "low_below_pct", "hdfs_min_mb_per_s", "hdfs_plateau_max_cv",
        "hdfs_plateau_min_samples", "hdfs_plateau_max_cpu_share"},
       false,
       false,
       false,
       &InputBoundFix},
      {"host_bound", &RunHostBound, {"moderate_pct", "high_pct"}},
      {"launch_bound", &RunLaunchBound, {"moderate_pct", "high_pct"}},
      {"ps_on_gpu", &RunPsOnGpu, {}},
      {"allreduce_candidate", &RunAllreduceCandidate, {"max_model_bytes", "min_sized_fraction"}},
      {"straggler_worker",
       &RunStragglerWorker,
       {"min_steps", "min_ratio"},
       false,
       false,
       false,
       &StragglerWorkerFix},
      {"worker_wait", &RunWorkerWait, {"max_busy_pct", "min_steps", "min_step_ms"}},
      {"thread_oversubscription",
       &RunThreadOversubscription,
       {"max_runnable_per_cpu", "min_throttled_pct", "min_threads_per_cpu"},
       true},
      {"cpu_pinning", &RunCpuPinning, {}, true},
      {"cpu_starvation",
       &RunCpuStarvation,
       {"min_runq_wait_share", "high_runq_wait_share", "min_cpu_demand", "min_throttled_pct"},
       true},
      {"ps_cpu_quota",
       &RunPsCpuQuota,
       {"min_throttled_pct", "min_throttled_time_pct", "high_throttled_time_pct"},
       true,
       false,
       false,
       &PsCpuQuotaFix},
      {"ps_cpu_imbalance",
       &RunPsCpuImbalance,
       {"min_ratio_to_next", "min_cpu_cores", "high_min_used_pct", "medium_min_used_pct"},
       true},
      // Kubernetes manifests and pod lists (collectors/k8s).
      {"ps_colocation",
       &RunPsColocation,
       {"min_ps", "max_ps_per_node"},
       false,
       true,
       false,
       &PsColocationFix},
      {"cpu_qos", &RunCpuQos, {}, false, true},
      {"thread_config", &RunThreadConfig, {}, false, true},
      {"k8s_live_mismatch", &RunK8sLiveMismatch, {"max_diff_pct"}, true, true},
      {"scaling",
       [](const AnalysisInput&, const Rule&) { return std::vector<Finding>(); },
       {"min_efficiency", "saturation_pct", "queueing_pct", "input_wait_pct", "throttled_pct",
        "cpu_wait_pct", "max_efficiency", "steal_spread_pct"},
       false,
       false,
       true},
  };
  return kAnalyzers;
}

const AnalyzerInfo* FindAnalyzer(std::string_view name) {
  for (const AnalyzerInfo& a : Analyzers()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

Status ValidateRuleSet(const RuleSet& rules) {
  for (const Rule& r : rules.rules) {
    const AnalyzerInfo* a = FindAnalyzer(r.analyzer);
    if (a == nullptr) {
      return InvalidInput("rule '{}': analyzer: unknown analyzer '{}'", r.id, r.analyzer);
    }
    for (std::string_view p : a->params) {
      if (r.FindParam(p) == nullptr) {
        return InvalidInput("rule '{}': params.{}: missing (analyzer '{}' reads it)", r.id, p,
                            r.analyzer);
      }
    }
  }
  return OkStatus();
}

namespace {

// Fills Finding::pod and ::node from the live process of the finding's task (the subject when it
// is a task, else `task`), and ::node for a finding about a node.
void NamePodsAndNodes(const Capture& c, std::vector<Finding>* findings) {
  bool any = false;
  for (const ProcessRow& p : c.processes) any |= p.node != 0 || p.pod != 0;
  if (!any) return;
  for (Finding& f : *findings) {
    if (f.subject_kind == "node" && f.node.empty()) f.node = f.subject;
    const std::string& label = f.subject_kind == "task" ? f.subject : f.task;
    const uint32_t t = label.empty() ? kNoIndex : c.FindTask(label);
    if (t == kNoIndex) continue;
    for (const ProcessRow& p : c.processes) {
      if (p.task != t) continue;
      if (f.pod.empty() && p.pod != 0) f.pod = std::string(c.Str(p.pod));
      if (f.node.empty() && p.node != 0) f.node = std::string(c.Str(p.node));
    }
  }
}

// ps-cpu-imbalance on the PS a hot-ps finding names has the same cause and fix: its figures
// join the hot-ps finding and the finding goes (issue 29).
void FoldIntoHotPs(std::vector<Finding>* findings) {
  auto hot = std::find_if(findings->begin(), findings->end(),
                          [](const Finding& f) { return f.rule_id == "hot-ps"; });
  if (hot == findings->end()) return;
  const std::string ps = hot->subject;
  for (auto it = findings->begin(); it != findings->end();) {
    if (it->rule_id != "ps-cpu-imbalance" || it->subject != ps) {
      ++it;
      continue;
    }
    for (const Figure& fig : it->evidence) {
      hot->evidence.push_back({"also: ps-cpu-imbalance: " + fig.label, fig.value, fig.unit});
    }
    hot->summary += "; its CPU use stands out too (ps-cpu-imbalance, folded in)";
    for (FindingObject& o : hot->objects) {
      if (o.subject == ps) o.evidence = hot->evidence, o.summary = hot->summary;
    }
    it = findings->erase(it);
    hot = std::find_if(findings->begin(), findings->end(),
                       [](const Finding& f) { return f.rule_id == "hot-ps"; });
  }
}

// hot-ps on a PS that slow-ps-host names, when the PS would not stand out at the others' speed
// (its op time over the slowdown is under hot-ps's min_ratio_to_next x the next busiest PS's op
// time): the host is the cause, and partitioning its variables (hot-ps's fix) would leave its
// part of each slow (issue 44: a slow PS host among evenly loaded PS, -44% promised, 0% real).
// The hot-ps finding goes (or the PS leaves a group of hot PS); slow-ps-host's summary says so.
// The first slow PS that folds a hot-ps finding ends the pass (the erase moves `findings`).
void FoldHotPsIntoSlowHost(const TaskStatsTable& st, const RuleSet& rules,
                           std::vector<Finding>* findings) {
  const Rule* hot_rule = rules.Find("hot-ps");
  const double ratio = hot_rule != nullptr ? hot_rule->Param("min_ratio_to_next", 2.0) : 2.0;
  for (Finding& slow : *findings) {
    if (slow.rule_id != "slow-ps-host") continue;
    const double slowdown = SlowPsHostSlowdown(slow);
    const TaskStats* ps = st.Find(slow.subject);
    if (slowdown <= 1 || ps == nullptr) continue;
    TimeNs next = 0;  // the busiest other PS's op time
    for (const TaskStats& t : st.tasks) {
      if (t.kind == JobKind::kPs && t.task != ps->task) next = std::max(next, t.op_time_ns);
    }
    if (double(ps->op_time_ns) / slowdown >= ratio * double(next)) continue;  // hot anyway
    bool folded = false;
    for (auto it = findings->begin(); it != findings->end(); ++it) {
      if (it->rule_id != "hot-ps") continue;
      if (it->subject == slow.subject && it->objects.size() <= 1) {
        findings->erase(it);
        folded = true;
        break;
      }
      // Several hot PS grouped: the slow one leaves the group, and a group of one becomes that
      // PS's finding.
      auto o = std::find_if(it->objects.begin(), it->objects.end(),
                            [&](const FindingObject& x) { return x.subject == ps->label; });
      if (o == it->objects.end()) continue;
      it->objects.erase(o);
      if (it->objects.size() == 1) {
        const FindingObject& rest = it->objects[0];
        it->subject = rest.subject;
        it->task = rest.task;
        it->summary = rest.summary;
        it->evidence = rest.evidence;
        it->ops = rest.ops;
      }
      folded = true;
      break;
    }
    if (!folded) continue;
    // `slow` may have moved (an erase before it): find it again.
    for (Finding& f : *findings) {
      if (f.rule_id == "slow-ps-host" && f.subject == ps->label) {
        f.summary += fmt::format(
            "; hot-ps on {} folded in: at the other PS's speed it would not stand out, so "
            "partitioning its variables would not help",
            ps->label);
      }
    }
    return;
  }
}

}  // namespace

AnalysisResult Analyze(const Capture& capture, const RuleSet& rules, const K8sDeployment* k8s,
                       int threads) {
  AnalysisResult result;
  result.k8s = k8s;
  result.stats = ComputeTaskStats(capture, threads);
  result.processes = ComputeProcessStats(capture);
  result.traffic = ComputeTrafficStats(capture);
  result.sched = ComputeSchedStats(capture);
  result.graph = std::make_shared<const StepGraph>(StepGraph::Build(capture));
  const StepGraph& graph = *result.graph;
  AnalysisInput in{capture, result.stats, result.processes, result.traffic, result.sched,
                   k8s,     &graph};
  // One replay model, built before the rules, for the rules that replay (ps-worker-ratio's
  // measured count), the impacts and the outlook.
  const ReplayModel model = BuildReplayModel(in);
  in.model = &model;
  // Rules are independent readers of `in`: run them in parallel, keep their findings in rule order.
  std::vector<const AnalyzerInfo*> run(rules.rules.size(), nullptr);
  for (size_t i = 0; i < rules.rules.size(); ++i) {
    const Rule& r = rules.rules[i];
    if (!r.enabled) {
      result.rules_disabled.push_back(r.id);
      continue;
    }
    run[i] = FindAnalyzer(r.analyzer);
    if (run[i] != nullptr && run[i]->runs) {  // several runs: tfdiag scaling
      run[i] = nullptr;
      result.rules_scaling.push_back(r.id);
    }
    if (run[i] != nullptr) result.rules_run.push_back(r.id);
  }
  std::vector<std::vector<Finding>> found(rules.rules.size());
  const int n_rules = static_cast<int>(rules.rules.size());
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int i = 0; i < n_rules; ++i) {
    if (run[i] != nullptr) found[i] = run[i]->run(in, rules.rules[i]);
  }
  for (int i = 0; i < n_rules; ++i) {
    if (run[i] == nullptr || !found[i].empty()) continue;
    std::string why = WhyRuleCannotRun(*run[i], in, rules.rules[i]);
    if (!why.empty()) result.rules_not_applicable.emplace_back(rules.rules[i].id, std::move(why));
  }
  for (std::vector<Finding>& f : found) {
    for (Finding& x : f) result.findings.push_back(std::move(x));
  }
  if (k8s != nullptr) result.rules_ignored = DropIgnoredFindings(*k8s, &result.findings);
  NamePodsAndNodes(capture, &result.findings);
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) {
                     if (a.severity != b.severity) return a.severity > b.severity;
                     if (a.rule_id != b.rule_id) return a.rule_id < b.rule_id;
                     return NaturalLess(a.subject, b.subject);
                   });
  result.findings = GroupFindings(std::move(result.findings), rules, capture);
  FoldIntoHotPs(&result.findings);
  FoldHotPsIntoSlowHost(result.stats, rules, &result.findings);
  FoldSlowHostIntoLink(&result.findings);  // a slow link is its own cause (slow_ps_link.h)
  QuotaFolds quota_folds{result.stats};
  // What the PS's quota causes is folded into ps-cpu-quota (analyzers/ps_cpu_quota.h).
  if (const Rule* r = rules.Find("slow-ps-host")) {
    quota_folds.min_slowdown = r->Param("min_slowdown", 1.5);
  }
  if (const Rule* r = rules.Find("hot-ps")) {
    quota_folds.hot_ratio = r->Param("min_ratio_to_next", 2.0);
  }
  if (const Rule* r = rules.Find("thread-oversubscription")) {
    quota_folds.oversub_ratio = r->Param("max_runnable_per_cpu", 1.5);
  }
  FoldIntoQuota(quota_folds, &result.findings);
  // Severity comes from each rule's own evidence and thresholds (issue 35): ComputeImpacts fills
  // Finding::impact only; LowerSeverityByImpact then shows at LOW a finding whose own fix a
  // trusted prediction says buys under 5% (issue 44), never on a withheld or low-confidence one
  // but for a withheld one whose floor (Impact::low_ns: a PS saturating first) caps it under 5%.
  // Each finding's fix model, found through its rule's analyzer (the registry), and the
  // thresholds the replay reads from the rule set.
  ImpactRules impact_rules;
  impact_rules.plan = [&](const ReplayModel& m, const Finding& f) {
    const Rule* r = rules.Find(f.rule_id);
    const AnalyzerInfo* a = r != nullptr ? FindAnalyzer(r->analyzer) : nullptr;
    return a != nullptr && a->fix != nullptr ? a->fix(in, m, f, *r) : FixPlan{};
  };
  ReadImpactThresholds(rules, &impact_rules);
  ComputeImpacts(in, model, impact_rules, &result.findings);
  LowerSeverityByImpact(&result.findings);
  // Within a severity, by what a trusted prediction says the fix buys, the biggest saving first;
  // findings without one keep their order after them.
  auto saving = [](const Finding& f) { return f.impact.trusted() ? f.impact.saving_pct : -1e300; };
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [&](const Finding& a, const Finding& b) {
                     if (a.severity != b.severity) return a.severity > b.severity;
                     return saving(a) > saving(b);
                   });
  result.outlook = ComputeOutlook(in, model, result.findings, impact_rules);
  result.notes = InputConsistencyNotes(capture, result.stats);
  for (std::string& n : DeploymentMatchNotes(capture, k8s)) result.notes.push_back(std::move(n));
  return result;
}

}  // namespace tfdiag
