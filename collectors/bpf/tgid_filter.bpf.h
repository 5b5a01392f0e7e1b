/* SPDX-License-Identifier: GPL-2.0 */
/* The selected processes of a probe, as a bitmap of tgids in an array map: bit (tgid & 63) of
 * word (tgid >> 6). sched_switch and sched_wakeup fire for every task on the node, so this test
 * runs on every event: an array lookup is inlined by the verifier (a bounds check and a load),
 * where a hash lookup is a helper call that hashes the key. User space sizes the map to
 * pid_max / 64 words before load (SizeTgidFilter) and sets bits (AddToTgidFilter). */
#ifndef TFDIAG_COLLECTORS_BPF_TGID_FILTER_BPF_H_
#define TFDIAG_COLLECTORS_BPF_TGID_FILTER_BPF_H_

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 65536); /* PID_MAX_LIMIT (4M) / 64; resized to pid_max / 64 */
  __type(key, __u32);
  __type(value, __u64);
} tgid_bits SEC(".maps");

static __always_inline bool selected(__u32 tgid) {
  __u32 word = tgid >> 6;
  __u64 *bits = bpf_map_lookup_elem(&tgid_bits, &word);

  return bits && ((*bits >> (tgid & 63)) & 1);
}

#endif /* TFDIAG_COLLECTORS_BPF_TGID_FILTER_BPF_H_ */
