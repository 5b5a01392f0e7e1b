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

#define AF_INET 2
#define MSG_PEEK 2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_TRAFFIC_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TFDIAG_TRAFFIC_MAX_SOCKETS);
	__type(key, struct tfdiag_traffic_key);
	__type(value, struct tfdiag_traffic_val);
} sockets SEC(".maps");

static const struct tfdiag_traffic_val zero_val;

static __always_inline int count(struct sock *sk, int ret, int flags, bool sent)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tfdiag_traffic_key key = {};
	struct tfdiag_traffic_val *v;

	if (ret <= 0 || !sk || (!sent && (flags & MSG_PEEK)))
		return 0;
	if (!bpf_map_lookup_elem(&tgids, &tgid))
		return 0;
	if (BPF_CORE_READ(sk, __sk_common.skc_family) != AF_INET)
		return 0;
	key.tgid = tgid;
	key.local_ip = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
	key.remote_ip = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	key.local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
	key.remote_port = BPF_CORE_READ(sk, __sk_common.skc_dport);
	v = bpf_map_lookup_elem(&sockets, &key);
	if (!v) {
		bpf_map_update_elem(&sockets, &key, &zero_val, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sockets, &key);
		if (!v)
			return 0;
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
	return count(sk, ret, flags, true);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(recv_btf, struct sock *sk, int ret, int flags)
{
	return count(sk, ret, flags, false);
}

SEC("raw_tp/sock_send_length")
int BPF_PROG(send_raw, struct sock *sk, int ret, int flags)
{
	return count(sk, ret, flags, true);
}

SEC("raw_tp/sock_recv_length")
int BPF_PROG(recv_raw, struct sock *sk, int ret, int flags)
{
	return count(sk, ret, flags, false);
}

char LICENSE[] SEC("license") = "GPL";
