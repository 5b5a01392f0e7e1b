// Predictions against the independent simulator (issue 44 item 4): jobs simulated at test time
// by bench/twins/indep/indepsim.py, a simulator written apart from the replay and from
// bench/twins/psjob.py that models what the replay leaves out (each NIC shared, PS ops sharing
// their cores, service out of arrival order, per-host speed, SyncReplicasOptimizer's aggregated
// update). Each test fails when a prediction that should be made is withheld, when it misses
// the fixed twin (the same job and seed, the fix applied as the fix text says), or when `Fix
// first` names a fix buying under 80% of the best single fix's saving.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "analyzers/analysis.h"
#include "rules/rule_set.h"
#include "tests/replay_indep_util.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The hand-set jobs (jobs.draw's keys; indepsim.py documents them).
constexpr const char* kDense4 =
    R"("dense": [{"name": "layer_0/kernel", "mb": 0.1, "read_ms": 0.03, "apply_ms": 0.08},
      {"name": "layer_1/kernel", "mb": 0.1, "read_ms": 0.03, "apply_ms": 0.08},
      {"name": "layer_2/kernel", "mb": 0.1, "read_ms": 0.03, "apply_ms": 0.08},
      {"name": "layer_3/kernel", "mb": 0.1, "read_ms": 0.03, "apply_ms": 0.08}])";

// `ps_speed`: each PS host's speed ("" for all at 1).
std::string Spec(int seed, int ps, int workers, int threads, int cores, bool sync,
                 const std::string& worker_speed, const std::string& tables,
                 std::string ps_speed = "") {
  if (ps_speed.empty()) {
    ps_speed = "1";
    for (int i = 1; i < ps; ++i) ps_speed += ", 1";
  }
  return "{\"seed\": " + std::to_string(seed) + ", \"ps\": " + std::to_string(ps) +
         ", \"workers\": " + std::to_string(workers) +
         ", \"ps_threads\": " + std::to_string(threads) +
         ", \"ps_cores\": " + std::to_string(cores) +
         ", \"compute_ms\": 20.0, \"overlap\": 0.1, \"op_sigma\": 0.03, \"step_sigma\": 0.03, "
         "\"latency_ms\": 0.05, \"mb_per_ms\": 3.125, \"part_ms\": 0.015, \"sync\": " +
         (sync ? "true" : "false") +
         ", \"prefetch\": true, \"input_ms\": 0.3, \"idle\": [], \"planted\": [], \"steps\": 16, "
         "\"worker_speed\": [" +
         worker_speed + "], \"ps_speed\": [" + ps_speed + "], " + kDense4 + ", \"tables\": [" +
         tables + "]}";
}

// `spec` with every dense variable of kDense4 at `mb` megabytes instead of 0.1.
std::string WithDenseMb(std::string spec, const std::string& mb) {
  for (size_t at = spec.find("\"mb\": 0.1,"); at != std::string::npos;
       at = spec.find("\"mb\": 0.1,", at)) {
    spec.replace(at, 10, "\"mb\": " + mb + ",");
  }
  return spec;
}

// `spec` with every transfer's latency at `ms` milliseconds instead of 0.05.
std::string Latency(std::string spec, const std::string& ms) {
  const std::string from = "\"latency_ms\": 0.05,";
  const size_t at = spec.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "the spec has no " << from << ": the test would judge another job";
    return spec;
  }
  spec.replace(at, from.size(), "\"latency_ms\": " + ms + ",");
  return spec;
}

std::string Ones(int n) {
  std::string s = "1";
  for (int i = 1; i < n; ++i) s += ", 1";
  return s;
}

// `spec` with every dense variable partitioned over all PS (fixed_size_partitioner), so that no
// PS is hot and the PS count alone decides their load.
std::string PartitionDense(std::string spec) {
  const size_t at = spec.find("\"planted\": [],");
  if (at == std::string::npos) {
    ADD_FAILURE() << "the spec has no planted list: the test would judge another job";
    return spec;
  }
  spec.insert(at, "\"partition_dense\": true, ");
  return spec;
}

// SyncReplicasOptimizer with a slow worker: going asynchronous (the rule's fix) halves the step;
// the prediction must be made (it was "not modelled" before issue 44).
TEST(ReplayIndep, SyncToAsyncIsPredicted) {
  ExpectPredicted(Spec(7, 2, 8, 2, 2, true, "1, 1, 1, 0.5, 1, 1, 1, 1", ""), "sync-replicas", 15);
}

// One unpartitioned table on ps:0 of 4, PS with 2 threads on 2 cores.
TEST(ReplayIndep, HotPsPartitionIsPredicted) {
  ExpectPredicted(Spec(8, 4, 16, 2, 2, false, Ones(16),
                       R"({"name": "emb_0", "gather_ms": 1.6, "apply_ms": 1.2, "rows_mb": 0.2,
                           "ps": 0})"),
                  "hot-ps", 10);
}

// The same table on PS with 4 threads on 1 core: the hot PS's ops run 4 at a time, each about
// 4x slower; after partitioning, every PS serves on its one core, not on 4 threads of the ops'
// captured (slowed) time (the replay took the slowed times as work: +15%).
TEST(ReplayIndep, ThreadsBeyondCoresArePredicted) {
  ExpectPredicted(Spec(9, 4, 12, 4, 1, false, Ones(12),
                       R"({"name": "emb_0", "gather_ms": 1.6, "apply_ms": 1.2, "rows_mb": 0.2,
                           "ps": 0})"),
                  "hot-ps", 10);
}

// A table partitioned evenly over 4 PS, ps:1 on a host at 0.35 of the others' speed (issue 44:
// "a slow PS host among evenly loaded PS: the advice partitions an already partitioned table,
// -44% promised, 0% real; moving the task saves 55%"). slow-ps-host must name it and predict
// the move (the twin: the task on a host at normal speed), Fix first must be the move, and
// hot-ps must not advise partitioning the table again.
TEST(ReplayIndep, SlowPsHostIsPredicted) {
  ExpectPredicted(Spec(10, 4, 16, 2, 2, false, Ones(16),
                       R"({"name": "emb_0", "gather_ms": 3.2, "apply_ms": 2.4, "rows_mb": 0.2,
                           "ps": "all"})",
                       "1, 0.35, 1, 1"),
                  "slow-ps-host", 10, "hot-ps");
}

// The same slow host with every dense variable at 1 KB (jobs.draw's variables are 0.4-1 KB):
// slow-ps-host compares like-sized variables, so it needs no size floor (a 64 KiB floor kept it
// from firing on every independent job).
TEST(ReplayIndep, SlowPsHostOfSmallVariablesIsPredicted) {
  ExpectPredicted(WithDenseMb(Spec(10, 4, 16, 2, 2, false, Ones(16),
                                   R"({"name": "emb_0", "gather_ms": 3.2, "apply_ms": 2.4,
                                       "rows_mb": 0.2, "ps": "all"})",
                                   "1, 0.35, 1, 1"),
                              "0.001"),
                  "slow-ps-host", 10, "hot-ps");
}

// Two PS, a table partitioned over both, ps:0 on a host at 0.45 of the other's speed (indep
// report28 36000, spent: no slow-ps-host against one other PS; Fix first named a PS count, -27%
// promised, -5% real, where the move buys 19%). The parts of the one table serve one kind of
// request, so their ratio tells the slow host: slow-ps-host must fire on it, predict the move
// and be Fix first.
TEST(ReplayIndep, SlowHostOfTwoPsIsPredictedFromItsParts) {
  ExpectPredicted(Spec(14, 2, 6, 1, 2, false, Ones(6),
                       R"({"name": "emb_0", "gather_ms": 1.6, "apply_ms": 1.2, "rows_mb": 0.2,
                           "ps": "all"})",
                       "0.45, 1"),
                  "slow-ps-host", 15);
}

// The same two PS on hosts of one speed: their parts run alike, and slow-ps-host must not fire.
TEST(ReplayIndep, TwoPsOfOneSpeedHaveNoSlowHost) {
  JobRun run;
  if (!Ran(Spec(14, 2, 6, 1, 2, false, Ones(6),
                R"({"name": "emb_0", "gather_ms": 1.6, "apply_ms": 1.2, "rows_mb": 0.2,
                    "ps": "all"})"),
           &run)) {
    return;
  }
  EXPECT_EQ(Row(run.job(), "slow-ps-host"), nullptr) << run.table;
}

// A healthy job (issue 44: no finding of medium or above where no fix buys 5%): a small table
// whole on ps:0 of 3, which does three quarters of the PS work while the PS are nearly idle.
// hot-ps fires (the share is real) and must be shown at LOW: ps:0 is far from its limits and its
// fix is predicted to buy about 2%; before issue 44 it was HIGH.
TEST(ReplayIndep, HealthyJobHasNoMediumFinding) {
  ExpectHealthyAndCalm(WithDenseMb(Spec(12, 3, 8, 1, 1, false, Ones(8),
                                        R"({"name": "emb_0", "gather_ms": 0.3, "apply_ms": 0.2,
                                            "rows_mb": 0.02, "ps": 0})"),
                                   "0.001"),
                       "hot-ps", " (ps:0 holds the table)", true);
}

// A sync job whose prefetched input pipeline (30 ms a batch, beside 20 ms of compute) paces it,
// two workers a little slower. The capture shows the pipeline's producer ops (tf.data
// MapDataset) beside the step: they are neither compute nor a wait, and the worker's steps take
// their batch from its buffer. Counted as compute they made the replay as is miss by 20-65% on
// the tune seeds (1007, 1009) and every prediction was withheld; here too, before issue 44.
TEST(ReplayIndep, PrefetchedInputPipelineIsReplayed) {
  std::string spec = Spec(13, 2, 8, 2, 2, true, "1, 1, 1, 0.8, 1, 1, 0.9, 1", "");
  const size_t at = spec.find("\"input_ms\": 0.3,");
  ASSERT_NE(at, std::string::npos);
  spec.replace(at, 16, "\"input_ms\": 30.0,");
  ExpectPredicted(spec, "sync-replicas", 10);
}

// 2 PS for 26 workers of a dense model, 0.05 ms of PS work per worker step: ps-worker-ratio
// suggests 13 PS, every variable partitioned over them. The part ops that adds (12 more per
// variable) cost more than the PS's work at TF's dispatch cost, and its PS's one core does not
// show at this load: before, predicted 8.2 ms at confidence high, the twin 16.1 ms (-49%).
TEST(ReplayIndep, MorePsOverTinyPsWorkIsNotMispredicted) {
  ExpectGoalsMet(3002, "ps-worker-ratio");
}

// tune3 4038: 2 PS for 61 asynchronous workers, one thread each: ps-worker-ratio suggests 31 PS,
// whose part ops at TF's dispatch cost "outweighed" the PS's work 9x and were withheld.
// Asynchronous, the fix is judged by the replay's dispatch-cost and service-order checks instead
// (PartOpsOutweighWork, analyzers/replay_fixes.h): predicted within 3% of its twin.
TEST(ReplayIndep, MorePsOfAsyncWorkersBeyondThePartOpBoundArePredicted) {
  ExpectPredicted("seed:4038", "ps-worker-ratio", 10);
}

// tune2 3004: SyncReplicasOptimizer over 11 workers and 4 PS, the transfers held fixed 18% of the
// step, over the 15% gate that withholds other fixes. Removing the barrier spreads the burst those
// transfers were held in, so the prediction is made, at most medium, saying why: within 2% of
// its twin (HeldTransfersOnceAsync, analyzers/replay_impact_gates.h).
TEST(ReplayIndep, SyncRemovedOverHeldTransfersIsPredictedAtMostMedium) {
  JobRun run;
  if (!Ran("seed:3004", &run)) return;
  const rapidjson::Value* row = Row(run.job(), "sync-replicas");
  ASSERT_NE(row, nullptr) << run.table;
  ASSERT_TRUE(row->HasMember("pred_ms")) << (*row)["why"].GetString();
  EXPECT_LT(std::abs((*row)["err_pct"].GetDouble()), 10) << run.table;
  EXPECT_STRNE((*row)["confidence"].GetString(), "high");
  EXPECT_NE(
      std::string((*row)["why"].GetString()).find("held as measured under the barrier's burst"),
      std::string::npos)
      << (*row)["why"].GetString();
}

// 8 PS for 48 workers of a sparse model, every variable already cut into 8 parts (the table over
// all PS, the dense variables by fixed_size_partitioner): ps-worker-ratio suggests 10 PS, its fix
// text says to run 10 and re-partition every variable over them, and its twin does exactly that
// (-1%). The prediction must be made and within 10% of the twin, and Fix first must not name a
// fix (none buys 5%). Counted per part (each of the 40 parts cut again into 10), the re-partition
// "added" 720 part ops per worker step, 4.7x the PS's 3.1 ms of work, and was withheld: the
// dominant miss of issue 44 on gen2 and gen3 (a new PS count withheld or not named), where
// gen3's report seeds 726, 729 and 731 (tables cut 16 ways) were withheld the same way.
TEST(ReplayIndep, MorePsOverPartitionedVariablesIsPredicted) {
  ExpectPredicted(PartitionDense(Spec(14, 8, 48, 2, 2, false, Ones(48),
                                      R"({"name": "emb_0", "gather_ms": 0.8, "apply_ms": 0.6,
                                          "rows_mb": 0.2, "ps": "all"})")),
                  "ps-worker-ratio", 10);
}

// 12 PS for 9 workers of a sparse model, 4 threads on 1 core: ps-worker-ratio suggests 3 PS.
// The PS left run the ops of the 9 removed on threads beyond their core, slower still as the
// load concentrates (analyzers/replay_fixes.h FewerPsNotModelled): predicted, a 3% loss; the
// twin lost 49% (-30%).
TEST(ReplayIndep, FewerPsIsNotMispredicted) { ExpectGoalsMet(3017, "ps-worker-ratio"); }

// 12 PS for 21 workers of a sparse model, 2 threads on 4 cores: ps-worker-ratio suggests 7 PS,
// every variable partitioned over them, and idle-ps names 7 PS to remove. Fewer PS with cores for
// their threads are predicted (before, never: "the PS left take the requests ... not
// predicted"): 12 -> 7 within 1% of its twin (-9%).
TEST(ReplayIndep, FewerPsArePredicted) { ExpectPredicted("seed:3010", "ps-worker-ratio", 10); }

// 12 PS for 6 workers, one thread each, transfers 42% of the step: 12 -> 2 PS puts the answers
// of 12 NICs on 2. Replayed over PS links of the bandwidth estimated from the capture's
// answers, it was predicted 43% fast (128.8 ms, the twin 226.1 ms); a fewer-PS fix is not
// replayed over the estimated links (FewerPs), and held-fixed transfers that large withhold it.
TEST(ReplayIndep, FewerPsOverEstimatedLinksAreNotMispredicted) {
  ExpectGoalsMet(3036, "ps-worker-ratio");
}

// SyncReplicasOptimizer on 4 PS with 8 threads on 1 core (fitted as 2): asynchronous applies
// would load a PS to 84% of its inferred capacity at today's step. Before, async was predicted to
// buy 27% and named Fix first; its twin is 22% slower. (Fix first is not checked: the best fix,
// twice the PS with every variable partitioned, saves 43%, and no rule names it; hot-ps's
// partitioning saves 31%.)
TEST(ReplayIndep, AsyncBeyondInferredCoresIsNotMispredicted) {
  ExpectGoalsMet(3009, "sync-replicas", false);
}

// A prefetched pipeline slower than the compute (spent held-out seed 28004: 1 PS, 2 workers, the
// tf.data producer's MapDataset ops as long as a step): the producer's ops bounded the steps, a
// producer op begun late in a step ended it a step later, and worker steps of 25 ms read 51 ms;
// input-bound's prefetch was predicted at 38.8 ms (+50% off its twin) and ps-worker-ratio +36%.
// The steps now end at their own ops (core/op_kinds.h). `Fix first` is not asserted: it names
// ps-worker-ratio (-12% predicted, 2% bought) where a straggler's fix buys 6%.
TEST(ReplayIndep, AProducerBesideTheStepsDoesNotLengthenThem) {
  ExpectGoalsMet(28004, "input-bound", /*fix_first=*/false);
}

// 2 PS for 3 workers of a sparse model, both busy (30% and 42% of the capture): the band (3-5
// workers per PS) says too many PS, but none is idle. ps-worker-ratio suggested 1 PS (its twin
// 49% slower, withheld) and Fix first named a straggler (13%); twice the PS, the variables
// partitioned over them, saves 33%. The rule now suggests 4 PS where every PS is busy at least
// loaded_min_busy_pct, and that fix is predicted and named first.
TEST(ReplayIndep, BusyPsAreNotTooMany) { ExpectGoalsMet(3038, "ps-worker-ratio"); }

// A healthy job (no fix buys 5%): 3 PS for 25 workers, ps:0 busy 87% of the step under an
// unevenly partitioned table, 20% of the step in input. Prefetch was predicted to buy 10%
// (input-bound MEDIUM) though ps:0 would then be busy 97% of the new step; its twin buys 0%.
// An untouched PS that would pass the saturation threshold after the fix bounds the step: from
// session 36 a floor (the fix buys at most 4% of the 62.8 ms step) and no prediction; since
// session 60 the prediction at that PS's saturation point (replay_impact_gates.h
// PredictsAtSaturation: 60.4 ms, its twin 62.5 ms), at most medium. Either way input-bound is LOW
// (ExpectGoalsMet: a healthy job). (Fix first is not checked: ps-worker-ratio's 5 PS, predicted
// 11%, costs 3%.)
TEST(ReplayIndep, SaturatedAfterTheFixBoundsIt) {
  JobRun run;
  if (!Ran("seed:1016", &run)) return;
  const rapidjson::Value* row = Row(run.job(), "input-bound");
  ASSERT_NE(row, nullptr) << run.table;
  EXPECT_EQ(std::string((*row)["severity"].GetString()), "low") << run.table;
  ASSERT_TRUE(row->HasMember("err_pct")) << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["why"].GetString()).find("the step predicted where ps:0"),
            std::string::npos)
      << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["confidence"].GetString()), "high");
  ExpectGoalsMet(1016, "input-bound", false);
}

// SyncReplicasOptimizer, 51 workers on 1 PS of one thread whose 51 accumulator ops a step it
// serves out of arrival order (tune seed 4027): every worker waits long for its push and briefly
// for the token, where the replay's in-order service gives the early workers a short push wait
// and a long barrier wait. The difference was held as a fixed tail and replayed before the
// barrier on top of it: the replay as is gave 25.6 ms against 18.9 ms and async (56% faster)
// was withheld. The tail is now what the push and token waits together leave unexplained.
// Asynchronous applies would keep the PS 99% busy at the replay's step, over the rule's
// max_busy_after_pct: withheld until session 61 (the replay alone was 21% fast), async is now
// predicted at the step where the PS is 90% busy (13% off its twin) and named first.
TEST(ReplayIndep, SyncTailIsNotTheServiceOrder) {
  ExpectPredicted("seed:4027", "sync-replicas", 25);
}

// 47 sync workers on 1 PS (tune seed 4021), 5.5% of the step exposed receive wait the PS queue
// does not explain: the burst of every worker pulling at once after the barrier. Held fixed in
// the asynchronous replay it was 13% off its twin (`high` before kMaxUnexplainedHigh, then
// `medium`); dropped with the barrier, async is predicted within 10% (Fix first right).
TEST(ReplayIndep, AsyncWithoutTheBurstWaitIsPredicted) {
  ExpectPredicted("seed:4021", "sync-replicas", 10);
}

// 29 sync workers on 2 PS (tune seed 4035): 16% of the step is wait after the barrier that the
// PS queue does not explain (the pulls' burst); async held it fixed and was predicted 37% slower
// than its twin, then withheld over kMaxUnexplainedAsync (15%). Dropped with the barrier, async
// (67% faster) is predicted within 10% and named Fix first.
TEST(ReplayIndep, AsyncOverBurstWaitIsPredicted) {
  ExpectPredicted("seed:4035", "sync-replicas", 10);
}

// 21 sync workers on 1 PS of one thread (tune seed 3014): 35% of the step is exposed receive
// wait after the barrier, over the 25% at which a fix's prediction is withheld as acting on time
// the model holds fixed. Going asynchronous drops that wait (it is the barrier's burst), so the
// gate does not apply to it: predicted within 10% of its twin (52% faster) and Fix first.
TEST(ReplayIndep, AsyncOverALargeBurstWaitIsPredicted) {
  ExpectPredicted("seed:3014", "sync-replicas", 10);
}

// 8 sync workers on 12 PS of one thread (tune seed 3037): SyncReplicasOptimizer's own ops are 4%
// of the 875 ms step, under the rule's min_worker_share_pct (5%), so sync-replicas did not fire,
// and `Fix first` named hot-ps (its twin 6% slower) where going asynchronous buys 53%: the
// barrier costs the burst of pulls after it, not only the machinery's ops. The rule now reports
// the machinery LOW under that share, and its fix is predicted (within 5%) and named first.
TEST(ReplayIndep, SyncUnderItsOpsShareIsStillFound) { ExpectGoalsMet(3037, "sync-replicas"); }

// A healthy job (no fix buys 5%; tune seed 3018): 4 workers wait for input 7% of their step
// (TensorBoard's moderate grade is 5%). Prefetch overlaps at most that share: its twin buys 2%,
// the prediction said 7%, and input-bound was MEDIUM. Under the rule's low_below_pct (10%) it is
// LOW.
TEST(ReplayIndep, InputShareUnderTenPercentIsLow) { ExpectGoalsMet(3018, "input-bound"); }

// A healthy job (tune seed 3015) whose 16 workers already prefetch: their tf.data producer ops
// run beside the steps, and the buffer still runs dry (20-38% of the step in IteratorGetNext).
// Prefetch, the fix the suite's twin applies, buys 0%; input-bound was HIGH. On a worker that
// already prefetches it is LOW (the pipeline's own speed paces the step, which is not predicted).
TEST(ReplayIndep, AlreadyPrefetchedInputIsLow) { ExpectGoalsMet(3015, "input-bound", false); }

// 16 PS for 2 sparse workers (tune seed 3005): a table partitioned over all 16 PS whose part on
// ps:7 carries 2.8x the mean part's op time (84% of ps:7's), ps:7 busy 80% and 1.2x the next
// PS, so no PS stood out and no rule fired, while the parts evened out buy 8%. hot-ps now names
// the uneven part, its fix model evens out the parts, and it was named first. Since session 58
// ps-worker-ratio names the fewest PS that replay within 5% of today's step instead of the band's
// 1 PS (ps_worker_ratio_fewer.h), and the replay promises that count 19% (its twin buys 4.5%),
// so Fix first names it, wrongly: the replay of fewer PS is optimistic (bench/README.md,
// session 58). Every prediction still meets its label's bound.
TEST(ReplayIndep, UnevenPartIsHot) { ExpectGoalsMet(3005, "hot-ps", false); }

// An asynchronous job of 16 workers, one at half speed: it slows only itself, so the job loses
// about 3% of its steps/s (the twin with that worker at the median's speed buys 3%: a healthy
// job). 2 ms per transfer leaves 8 ms of the step as wait the PS queue does not explain, so the
// fix's prediction is withheld and cannot lower the severity. straggler-worker fires (the
// straggler is real) and must be LOW: under the rule's async_min_loss_pct (5%); before, it was
// MEDIUM whatever the count of workers (tune seeds 3023 and 3027: medium, their twins -14% and
// 2%).
TEST(ReplayIndep, AsyncStragglerAmongManyIsLow) {
  ExpectHealthyAndCalm(Latency(Spec(14, 3, 16, 2, 2, false, "0.5, " + Ones(15), ""), "2.0"),
                       "straggler-worker", "", false);
}

// 4 PS, one idle, three hot tables and a slow PS host (report5 13020, spent): idle-ps's fewer PS,
// replayed re-partitioned over the 3 left, was predicted 96.3 ms where its twin ran 180.6 ms
// (-47%); kept placement gives the measured step. The two readings of "lower the PS count" are
// far apart, so no prediction is made (checked), every prediction made meets its goal, and Fix
// first is right.
TEST(ReplayIndep, FewerPsWherePlacementDecidesIsNotMispredicted) {
  ExpectGoalsMet(13020, "idle-ps", true, "idle-ps");
}

// 2 PS for 8 workers of a sparse model (4 workers per PS: inside the band), the table over both
// PS, each PS's op time x workers / threads about 1.4x the compute: the PS bound the step, and
// twice or three times the PS buy 21-26%. Before, ps-worker-ratio fired only outside the band: no
// finding, Fix first named nothing. By measurement (ps_worker_ratio_measured.h) the rule now
// names a larger count, its prediction is made within 10% of the twin, and Fix first is right.
TEST(ReplayIndep, PsWorkerRatioInBandSaturatedPsGetMorePs) {
  ExpectPredicted(PartitionDense(Spec(15, 2, 8, 2, 2, false, Ones(8),
                                      R"({"name": "emb_0", "gather_ms": 8.0, "apply_ms": 6.0,
                                          "rows_mb": 0.2, "ps": "all"})")),
                  "ps-worker-ratio", 10);
}

// The same job with a light table (the PS busy a fraction of their threads' time): healthy (no
// fix buys 5%), and no ps-worker-ratio finding, nor any finding at medium or above.
TEST(ReplayIndep, PsWorkerRatioInBandCalmPsHaveNoFinding) {
  JobRun run;
  if (!Ran(PartitionDense(Spec(16, 2, 8, 2, 2, false, Ones(8),
                               R"({"name": "emb_0", "gather_ms": 0.6, "apply_ms": 0.4,
                                   "rows_mb": 0.2, "ps": "all"})")),
           &run)) {
    return;
  }
  const rapidjson::Value& job = run.job();
  ASSERT_TRUE(job["healthy"].GetBool()) << run.table;
  EXPECT_EQ(Row(job, "ps-worker-ratio"), nullptr) << run.table;
  for (const auto& f : job["severe_findings"].GetArray()) {
    ADD_FAILURE() << f.GetString() << " at medium or above on a healthy job\n" << run.table;
  }
}

// 4 PS for 16 workers, the table and the dense variables over all PS, ps:1 on a host at 0.55
// of the others' speed: about 1.8x slower on its parts, which slow-ps-host does not name (its
// like-sized comparison, less what ps:1's ops at once explain, stays under min_slowdown), while
// the PS bound the step and more PS buy about 40%. The
// PS-count prediction must keep ps:1's share of the re-partitioned work at its host's speed
// (ReplayModel::Ps::host_slowdown): spread as if every PS ran at the mean speed, it promised
// 29% more than the twin (indep report8's 16007 likewise: -20% with confidence high).
TEST(ReplayIndep, MorePsKeepASlowHostsShareSlow) {
  JobRun run;
  if (!Ran(PartitionDense(Spec(17, 4, 16, 2, 2, false, Ones(16),
                               R"({"name": "emb_0", "gather_ms": 8.0, "apply_ms": 6.0,
                                   "rows_mb": 0.2, "ps": "all"})",
                               "1, 0.55, 1, 1")),
           &run)) {
    return;
  }
  const rapidjson::Value* row = Row(run.job(), "ps-worker-ratio");
  ASSERT_NE(row, nullptr) << "no ps-worker-ratio finding:\n" << run.table;
  ASSERT_TRUE(row->HasMember("pred_ms")) << "withheld: " << (*row)["why"].GetString() << "\n"
                                         << run.table;
  EXPECT_LT(std::abs((*row)["err_pct"].GetDouble()), 10) << (*row)["why"].GetString() << "\n"
                                                         << run.table;
}

// A fix that shortens the step without moving a PS's bytes loads that PS's NIC more (analyzers/
// link_queue.h). Independent suite seed 20010 (report12, spent: tuned on in session 30): prefetch
// takes the step from 69 to 42 ms in the replay, its twin 53 ms, ps:0's NIC busy 57% with the
// answers as captured and 78% at the new load. It was `high` 20% off its twin; the prediction is
// still made, within medium's 25%, and not `high`.
TEST(ReplayIndep, ALinkLoadedByTheFixIsNotHigh) {
  JobRun run;
  if (!Ran("seed:20010", &run)) return;
  const rapidjson::Value* row = Row(run.job(), "input-bound");
  ASSERT_NE(row, nullptr) << run.table;
  ASSERT_TRUE(row->HasMember("pred_ms")) << (*row)["why"].GetString();
  const double err = std::abs((*row)["err_pct"].GetDouble());
  EXPECT_LT(err, 25) << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["confidence"].GetString()), "high")
      << err << "% off: " << (*row)["why"].GetString();
  EXPECT_NE(std::string((*row)["why"].GetString()).find("would queue its answers longer"),
            std::string::npos)
      << "the why names the PS NIC's queueing: " << (*row)["why"].GetString();
}

}  // namespace
}  // namespace tfdiag::test
