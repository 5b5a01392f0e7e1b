"""The machine side of make twins-live (run_twins_live.py): the load gate (CPU other work uses),
a CPU quota (a cgroup of our own) and a slow link (a network namespace behind a shaped veth
pair). Each resource is removed by its close(), which the runner calls on every way out."""

import os
import subprocess
import time


class Setup(Exception):
    """A shape cannot run here (no root, no cgroup cpu controller, no ip/tc)."""


# --- the load gate -----------------------------------------------------------------------------

HZ = os.sysconf("SC_CLK_TCK")


def cpu_clock():
    """(wall s, machine busy s, this process's and its reaped children's CPU s)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    t = os.times()
    return (time.monotonic(), (sum(v[:8]) - idle) / HZ,
            t.user + t.system + t.children_user + t.children_system)


def foreign_cores(a, b):
    wall = b[0] - a[0]
    if wall <= 0:
        return 0.0
    return max(0.0, ((b[1] - a[1]) - (b[2] - a[2])) / wall)


def wait_quiet(args):
    """Waits (at most --wait-quiet s) for 3 seconds in a row in each of which other work uses at
    most --max-foreign-cores (a compile between two files pauses for about a second)."""
    deadline = time.monotonic() + args.wait_quiet
    quiet = 0
    while quiet < 3 and time.monotonic() < deadline:
        a = cpu_clock()
        time.sleep(1)
        quiet = quiet + 1 if foreign_cores(a, cpu_clock()) <= args.max_foreign_cores else 0


# --- a CPU quota: a child cgroup of our own ----------------------------------------------------


class QuotaCgroup:
    """A cgroup (v2 cpu.max where the unified hierarchy has the cpu controller, else v1
    cpu.cfs_quota_us) with `cpus` CPUs of CFS quota per 10 ms period; removed by close()."""

    PERIOD_US = 10000

    def __init__(self, cpus):
        name = "tfdiag-twins-live-%d" % os.getpid()
        quota = int(cpus * self.PERIOD_US)
        v2_roots = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        self.path = None
        for root in v2_roots:
            try:
                with open(os.path.join(root, "cgroup.controllers")) as f:
                    if "cpu" not in f.read().split():
                        continue
                with open(os.path.join(root, "cgroup.subtree_control")) as f:
                    if "cpu" not in f.read().split():
                        with open(os.path.join(root, "cgroup.subtree_control"), "w") as w:
                            w.write("+cpu")
                self.path = os.path.join(root, name)
                os.mkdir(self.path)
                with open(os.path.join(self.path, "cpu.max"), "w") as f:
                    f.write("%d %d" % (quota, self.PERIOD_US))
                self.procs = os.path.join(self.path, "cgroup.procs")
                return
            except OSError:
                self.close()
                continue
        v1 = "/sys/fs/cgroup/cpu"
        if not os.path.exists(os.path.join(v1, "cpu.cfs_quota_us")):
            raise Setup("no cgroup cpu controller (neither cgroup2 cpu.max nor v1 cpu.cfs_quota_us)")
        self.path = os.path.join(v1, name)
        try:
            os.mkdir(self.path)
            with open(os.path.join(self.path, "cpu.cfs_period_us"), "w") as f:
                f.write(str(self.PERIOD_US))
            with open(os.path.join(self.path, "cpu.cfs_quota_us"), "w") as f:
                f.write(str(quota))
        except OSError as e:
            self.close()
            raise Setup("cannot make a cgroup with a CPU quota under %s: %s" % (v1, e))
        self.procs = os.path.join(self.path, "cgroup.procs")

    def enter(self):
        """preexec_fn: moves the child into the cgroup before it execs."""
        with open(self.procs, "w") as f:
            f.write(str(os.getpid()))

    def throttled(self):
        """(periods, throttled periods) from cpu.stat."""
        st = {}
        try:
            with open(os.path.join(self.path, "cpu.stat")) as f:
                for line in f:
                    k, v = line.split()[:2]
                    st[k] = int(v)
        except OSError:
            pass
        return st.get("nr_periods", 0), st.get("nr_throttled", 0)

    def close(self):
        if self.path and os.path.isdir(self.path):
            for _ in range(50):  # its tasks have exited; the kernel may take a moment
                try:
                    os.rmdir(self.path)
                    break
                except OSError:
                    time.sleep(0.1)
        self.path = None


# --- a slow link: a network namespace behind a shaped veth pair --------------------------------


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise Setup("`%s` failed: %s" % (cmd, r.stderr.strip()))
    return r


class Netns:
    """Namespace twl<pid> with veth twl<pid>h (host, .1/30) - twl<pid>n (inside, .2/30) in
    10.229.<pid % 256>.0/30; shape(mbit) puts a tc tbf of that rate on both ends, shape(None)
    removes it. close() deletes the namespace (and with it the veth pair)."""

    def __init__(self):
        if os.geteuid() != 0:
            raise Setup("needs root for ip netns")
        tag = "twl%d" % os.getpid()
        self.ns, self.host_if, self.ns_if = tag, tag + "h", tag + "n"
        net = "10.229.%d" % (os.getpid() % 256)
        self.host_ip, self.ip = net + ".1", net + ".2"
        self.created = False
        sh("ip netns add %s" % self.ns)
        self.created = True
        sh("ip link add %s type veth peer name %s" % (self.host_if, self.ns_if))
        sh("ip link set %s netns %s" % (self.ns_if, self.ns))
        sh("ip addr add %s/30 dev %s && ip link set %s up" % (self.host_ip, self.host_if,
                                                               self.host_if))
        sh("ip netns exec %s sh -c 'ip addr add %s/30 dev %s && ip link set %s up && "
           "ip link set lo up'" % (self.ns, self.ip, self.ns_if, self.ns_if))

    def shape(self, mbit):
        for pre, dev in (("", self.host_if), ("ip netns exec %s " % self.ns, self.ns_if)):
            sh("%stc qdisc del dev %s root" % (pre, dev), check=False)
            if mbit:
                # burst: 64 KiB, a GSO segment's worth; latency: the queue the link drains in 50
                # ms.
                sh("%stc qdisc add dev %s root tbf rate %dmbit burst 64kb latency 50ms" %
                   (pre, dev, mbit))

    def close(self):
        if self.created:
            sh("ip netns del %s" % self.ns, check=False)
            sh("ip link del %s" % self.host_if, check=False)  # if the namespace kept it
            self.created = False
