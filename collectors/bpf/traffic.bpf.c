// SPDX-License-Identifier: GPL-2.0
/* Bytes per socket of the selected processes (libbpf-tools tcptop style, without kprobes).
 * sock:sock_send_length and sock:sock_recv_length fire in sock_sendmsg()/sock_recvmsg() with
 * the syscall's return value, for send/sendto/sendmsg/write and recv/recvfrom/recvmsg/read
 * alike, in the caller's context (so the tgid filter works). Both a tp_btf and a raw_tp
 * flavour are built; user space keeps the one that attaches (see traffic_collector.cc). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "traffic.h"
#include "tgid_filter.bpf.h"

#define AF_INET 2
#define MSG_PEEK 2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_TRAFFIC_MAX_SOCKETS);
	__type(key, struct tfdiag_traffic_key);
	__type(value, struct tfdiag_traffic_val);
} sockets SEC(".maps");

/* Sockets that found `sockets` full (TFDIAG_TRAFFIC_MAX_SOCKETS) and were not counted. User
 * space removes folded sockets (closed ones, peers that are not TF tasks) every sample, so the
 * map only fills when that many sockets move bytes within one sample. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} untracked SEC(".maps");

static const struct tfdiag_traffic_val zero_val;

/* Socket fields: direct loads for tp_btf (typed), CO-RE probe reads for raw_tp. `btf` is a
 * constant at every call, so each flavour compiles to one branch. */
#define SK_FIELD(btf, sk, f) ((btf) ? (sk)->__sk_common.f : BPF_CORE_READ((sk), __sk_common.f))

static __always_inline int count(struct sock *sk, int ret, int flags, bool sent, bool btf)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tfdiag_traffic_key key = {};
	struct tfdiag_traffic_val *v;

	if (ret <= 0 || !sk || (!sent && (flags & MSG_PEEK)))
		return 0;
	if (!selected(tgid))
		return 0;
	if (SK_FIELD(btf, sk, skc_family) != AF_INET)
		return 0;
	key.tgid = tgid;
	key.local_ip = SK_FIELD(btf, sk, skc_rcv_saddr);
	key.remote_ip = SK_FIELD(btf, sk, skc_daddr);
	key.local_port = SK_FIELD(btf, sk, skc_num);
	key.remote_port = SK_FIELD(btf, sk, skc_dport);
	v = bpf_map_lookup_elem(&sockets, &key);
	if (!v) {
		bpf_map_update_elem(&sockets, &key, &zero_val, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sockets, &key);
		if (!v) {
			__u32 zero = 0;
			__u64 *n = bpf_map_lookup_elem(&untracked, &zero);

			if (n)
				*n += 1;
			return 0;
		}
	}
	if (sent) {
		__sync_fetch_and_add(&v->bytes_sent, ret);
		__sync_fetch_and_add(&v->sends, 1);
	} else {
		__sync_fetch_and_add(&v->bytes_received, ret);
		__sync_fetch_and_add(&v->receives, 1);
	}
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(send_btf, struct sock *sk, int ret, int flags)
{
	return count(sk, ret, flags, true, true);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(recv_btf, struct sock *sk, int ret, int flags)
{
	return count(sk, ret, flags, false, true);
}

SEC("raw_tp/sock_send_length")
int BPF_PROG(send_raw, struct sock *sk, int ret, int flags)
{
	return count(sk, ret, flags, true, false);
}

SEC("raw_tp/sock_recv_length")
int BPF_PROG(recv_raw, struct sock *sk, int ret, int flags)
{
	return count(sk, ret, flags, false, false);
}

char LICENSE[] SEC("license") = "GPL";
