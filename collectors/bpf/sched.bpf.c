// SPDX-License-Identifier: GPL-2.0
/* Scheduling of the selected processes' threads (libbpf-tools runqlat + cpudist style):
 * per-thread voluntary/involuntary switch counts and on-CPU ns, and a per-process log2
 * histogram of run-queue latency. Selected processes are the tgids set in `tgid_bits`
 * (tgid_filter.bpf.h), filled by user space before and while running. All aggregation happens here; user space drains.
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
#include "tgid_filter.bpf.h"

#define TASK_RUNNING 0

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

static const struct tfdiag_sched_thread zero_thread;
static const struct tfdiag_sched_hist zero_hist;

/* Task fields: direct loads for tp_btf (the verifier knows the type), CO-RE probe reads for
 * raw_tp. `btf` is a constant at every call, so each flavour compiles to one branch. */
#define TASK_FIELD(btf, p, f) ((btf) ? (p)->f : BPF_CORE_READ((p), f))

/* The entry of thread `tid` of `tgid`, created on first sight; NULL when the map is full.
 * A tid reused by another process starts from zero, so the old thread's counts do not move to
 * the new process. */
static __always_inline struct tfdiag_sched_thread *thread_of(__u32 tid, __u32 tgid)
{
	struct tfdiag_sched_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (!t) {
		bpf_map_update_elem(&threads, &tid, &zero_thread, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&threads, &tid);
	}
	if (t && t->tgid != tgid) {
		*t = zero_thread;
		t->tgid = tgid;
	}
	return t;
}

static __always_inline void mark_enqueued(struct task_struct *p, bool btf)
{
	__u32 tgid = TASK_FIELD(btf, p, tgid);
	struct tfdiag_sched_thread *t;

	if (!selected(tgid))
		return;
	t = thread_of(TASK_FIELD(btf, p, pid), tgid);
	if (t)
		t->enqueued_at = bpf_ktime_get_ns();
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

/* The thread `ptid` of `ptgid` leaves the CPU at `now`. Plain adds: only this CPU, holding
 * the thread's run-queue lock, writes its counters now. */
static __always_inline void switch_out(__u32 ptid, __u32 ptgid, bool preempt,
				       unsigned int prev_state, __u64 now)
{
	struct tfdiag_sched_thread *t = thread_of(ptid, ptgid);

	if (!t)
		return;
	/* The kernel counts nvcsw when a non-preempted task blocks, else nivcsw. */
	if (!preempt && prev_state != TASK_RUNNING)
		t->voluntary++;
	else
		t->involuntary++;
	if (t->oncpu_at && now > t->oncpu_at)
		t->oncpu_ns += now - t->oncpu_at;
	t->oncpu_at = 0;
	/* Still runnable: it waits on the run queue from now on (else its wakeup will say). */
	if (prev_state == TASK_RUNNING)
		t->enqueued_at = now;
}

/* The thread `ntid` of `ntgid` goes on a CPU at `now`: its wait since enqueued_at, if known,
 * goes to the process's histogram. */
static __always_inline void switch_in(__u32 ntid, __u32 ntgid, __u64 now)
{
	struct tfdiag_sched_thread *t = thread_of(ntid, ntgid);
	struct tfdiag_sched_hist *h;
	__u64 since;

	if (!t)
		return;
	since = t->enqueued_at;
	t->enqueued_at = 0;
	t->oncpu_at = now;
	if (!since || now <= since)
		return;
	h = bpf_map_lookup_elem(&hists, &ntgid);
	if (!h) {
		bpf_map_update_elem(&hists, &ntgid, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &ntgid);
	}
	if (h) {
		__u64 delta = now - since;
		__u32 slot = log2l(delta);

		/* Threads of one process switch in on several CPUs at once: atomic adds. */
		if (slot < TFDIAG_SCHED_MAX_SLOTS)
			__sync_fetch_and_add(&h->slots[slot], 1);
		__sync_fetch_and_add(&h->total_ns, delta);
		__sync_fetch_and_add(&h->count, 1);
	}
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
