// SPDX-License-Identifier: GPL-2.0
/* Scheduling of the selected processes' threads (libbpf-tools runqlat + cpudist style):
 * per-thread voluntary/involuntary switch counts and on-CPU ns, and a per-process log2
 * histogram of run-queue latency. Selected processes are the tgids in `tgids`, filled by
 * user space before and while running. All aggregation happens here; user space drains.
 *
 * Two flavours of the same programs are built: tp_btf (typed arguments, direct loads) and
 * raw_tp (untyped: task fields through BPF_CORE_READ). User space keeps the one that attaches
 * (sched_collector.cc). sched_switch and sched_wakeup fire for every task on the machine, so
 * each program looks at the tgid first and does nothing else for unselected tasks. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sched.h"

#define TASK_RUNNING 0

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_SCHED_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct tfdiag_sched_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_SCHED_MAX_TGIDS);
	__type(key, __u32);
	__type(value, struct tfdiag_sched_hist);
} hists SEC(".maps");

/* tid -> ns when the thread became runnable (wakeup or preempted). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} enqueued SEC(".maps");

/* tid -> ns when the thread went on a CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} oncpu_since SEC(".maps");

static const struct tfdiag_sched_thread zero_thread;
static const struct tfdiag_sched_hist zero_hist;

/* Task fields: direct loads for tp_btf (the verifier knows the type), CO-RE probe reads for
 * raw_tp. `btf` is a constant at every call, so each flavour compiles to one branch. */
#define TASK_FIELD(btf, p, f) ((btf) ? (p)->f : BPF_CORE_READ((p), f))

static __always_inline bool selected(__u32 tgid)
{
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

static __always_inline void mark_enqueued(struct task_struct *p, bool btf)
{
	__u32 tid, tgid = TASK_FIELD(btf, p, tgid);
	__u64 ts;

	if (!selected(tgid))
		return;
	tid = TASK_FIELD(btf, p, pid);
	ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&enqueued, &tid, &ts, BPF_ANY);
}

static __always_inline __u32 log2l(__u64 v)
{
	__u32 r = 0;

	while (v > 1 && r < TFDIAG_SCHED_MAX_SLOTS - 1) {
		v >>= 1;
		r++;
	}
	return r;
}

/* The thread `ptid` of `ptgid` leaves the CPU at `now`. */
static __always_inline void switch_out(__u32 ptid, __u32 ptgid, bool preempt,
				       unsigned int prev_state, __u64 now)
{
	struct tfdiag_sched_thread *t = bpf_map_lookup_elem(&threads, &ptid);
	__u64 *since;

	if (!t) {
		bpf_map_update_elem(&threads, &ptid, &zero_thread, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&threads, &ptid);
	}
	if (t) {
		t->tgid = ptgid;
		/* The kernel counts nvcsw when a non-preempted task blocks, else nivcsw. */
		if (!preempt && prev_state != TASK_RUNNING)
			__sync_fetch_and_add(&t->voluntary, 1);
		else
			__sync_fetch_and_add(&t->involuntary, 1);
		since = bpf_map_lookup_elem(&oncpu_since, &ptid);
		if (since && *since && now > *since)
			__sync_fetch_and_add(&t->oncpu_ns, now - *since);
	}
	/* Still runnable: it waits on the run queue from now on. */
	if (prev_state == TASK_RUNNING)
		bpf_map_update_elem(&enqueued, &ptid, &now, BPF_ANY);
}

/* The thread `ntid` of `ntgid` goes on a CPU at `now`. */
static __always_inline void switch_in(__u32 ntid, __u32 ntgid, __u64 now)
{
	__u64 *ts = bpf_map_lookup_elem(&enqueued, &ntid);
	struct tfdiag_sched_hist *h;

	bpf_map_update_elem(&oncpu_since, &ntid, &now, BPF_ANY);
	if (!ts)
		return;
	if (now > *ts) {
		__u64 delta = now - *ts;

		h = bpf_map_lookup_elem(&hists, &ntgid);
		if (!h) {
			bpf_map_update_elem(&hists, &ntgid, &zero_hist, BPF_NOEXIST);
			h = bpf_map_lookup_elem(&hists, &ntgid);
		}
		if (h) {
			__u32 slot = log2l(delta);

			if (slot < TFDIAG_SCHED_MAX_SLOTS)
				__sync_fetch_and_add(&h->slots[slot], 1);
			__sync_fetch_and_add(&h->total_ns, delta);
			__sync_fetch_and_add(&h->count, 1);
		}
	}
	bpf_map_delete_elem(&enqueued, &ntid);
}

static __always_inline void on_switch(bool preempt, struct task_struct *prev,
				      struct task_struct *next, unsigned int prev_state, bool btf)
{
	__u32 ptid = TASK_FIELD(btf, prev, pid), ptgid = TASK_FIELD(btf, prev, tgid);
	__u32 ntid = TASK_FIELD(btf, next, pid), ntgid = TASK_FIELD(btf, next, tgid);
	bool out = ptid != 0 && selected(ptgid), in = ntid != 0 && selected(ntgid);
	__u64 now;

	if (!out && !in)
		return; /* the common case on a busy node: neither task is ours */
	now = bpf_ktime_get_ns();
	if (out)
		switch_out(ptid, ptgid, preempt, prev_state, now);
	if (in)
		switch_in(ntid, ntgid, now);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(wakeup_btf, struct task_struct *p)
{
	mark_enqueued(p, true);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(wakeup_new_btf, struct task_struct *p)
{
	mark_enqueued(p, true);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	on_switch(preempt, prev, next, prev_state, true);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(wakeup_raw, struct task_struct *p)
{
	mark_enqueued(p, false);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(wakeup_new_raw, struct task_struct *p)
{
	mark_enqueued(p, false);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	on_switch(preempt, prev, next, prev_state, false);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
