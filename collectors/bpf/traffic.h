/* Shared between traffic.bpf.c and traffic_collector.cc: fixed-width types only. */
#ifndef TFDIAG_COLLECTORS_BPF_TRAFFIC_H_
#define TFDIAG_COLLECTORS_BPF_TRAFFIC_H_

/* Sockets the kernel map holds at once (about 6 MB of kernel memory). User space drains it every
 * sample and deletes folded sockets (bpf_sampler.h); a socket that finds it full is not counted
 * and adds one to the `untracked` counter. */
#define TFDIAG_TRAFFIC_MAX_SOCKETS 65536

/* One socket of one selected process. Addresses and ports in network byte order, as the
 * kernel keeps them in struct sock_common; IPv4 only (AF_INET). Zero-filled padding. */
struct tfdiag_traffic_key {
  __u32 tgid;
  __u32 local_ip;    /* skc_rcv_saddr */
  __u32 remote_ip;   /* skc_daddr */
  __u16 local_port;  /* skc_num, host byte order */
  __u16 remote_port; /* skc_dport, network byte order */
};

/* Cumulative since attach: the return values of sendmsg/recvmsg on the socket (> 0 only). */
struct tfdiag_traffic_val {
  __u64 bytes_sent;
  __u64 bytes_received;
  __u64 sends;
  __u64 receives;
};

#endif /* TFDIAG_COLLECTORS_BPF_TRAFFIC_H_ */
