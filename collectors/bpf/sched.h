/* Shared between sched.bpf.c and sched_collector.cc: fixed-width types only. */
#ifndef TFDIAG_COLLECTORS_BPF_SCHED_H_
#define TFDIAG_COLLECTORS_BPF_SCHED_H_

#define TFDIAG_SCHED_MAX_SLOTS 32 /* log2 buckets of run-queue latency, in ns */
#define TFDIAG_SCHED_MAX_TGIDS 1024
#define TFDIAG_SCHED_MAX_THREADS 65536

/* Per thread (key: tid): counters cumulative since attach, and the thread's scheduling state,
 * kept in one entry so that each event costs one map lookup per thread. Only the CPU that
 * switches the thread in or out (under its run-queue lock) or wakes it writes the entry. */
struct tfdiag_sched_thread {
  __u32 tgid;
  __u32 pad;
  __u64 voluntary;   /* switched out while blocking (prev_state != TASK_RUNNING) */
  __u64 involuntary; /* preempted while runnable */
  __u64 oncpu_ns;    /* time on a CPU, ns */
  __u64 enqueued_at; /* state: ns when it became runnable (wakeup or preempted); 0 none */
  __u64 oncpu_at;    /* state: ns when it went on a CPU; 0 not on a CPU */
};

/* Per process (key: tgid): run-queue latency histogram, wakeup or preemption -> on CPU.
 * slots[i] counts waits in [2^i, 2^(i+1)) ns (slot 0: < 2 ns). */
struct tfdiag_sched_hist {
  __u64 slots[TFDIAG_SCHED_MAX_SLOTS];
  __u64 total_ns; /* sum of the waits, ns */
  __u64 count;
};

#endif /* TFDIAG_COLLECTORS_BPF_SCHED_H_ */
