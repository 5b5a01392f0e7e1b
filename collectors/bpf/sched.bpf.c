// SPDX-License-Identifier: GPL-2.0
/* Scheduling of the selected processes' threads (libbpf-tools runqlat + cpudist style):
 * per-thread voluntary/involuntary switch counts and on-CPU ns, and a per-process log2
 * histogram of run-queue latency. Selected processes are the tgids in `tgids`, filled by
 * user space before and while running. All aggregation happens here; user space drains. */
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

/* tid -> ns when the thread became runnable (wakeup) or went on CPU (switch in). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} enqueued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} oncpu_since SEC(".maps");

static const struct tfdiag_sched_thread zero_thread;
static const struct tfdiag_sched_hist zero_hist;

static __always_inline bool selected(__u32 tgid)
{
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

static __always_inline void mark_enqueued(struct task_struct *p)
{
	__u32 tid = p->pid;
	__u64 ts;

	if (!selected(p->tgid))
		return;
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

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	mark_enqueued(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	mark_enqueued(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = prev->pid, ptgid = prev->tgid;
	__u32 ntid = next->pid, ntgid = next->tgid;

	if (ptid != 0 && selected(ptgid)) {
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
	if (ntid != 0 && selected(ntgid)) {
		__u64 *ts = bpf_map_lookup_elem(&enqueued, &ntid);
		struct tfdiag_sched_hist *h;

		bpf_map_update_elem(&oncpu_since, &ntid, &now, BPF_ANY);
		if (!ts)
			return 0;
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
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
