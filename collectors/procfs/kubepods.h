// Kubernetes identity of a process from its cgroup path: pod UID, container id, QoS class and
// the kubelet's cgroup driver.
//
// Layouts (kubelet's pkg/kubelet/cm/cgroup_manager_linux.go and qos_container_manager_linux.go):
//   cgroupfs: /kubepods[/besteffort|/burstable]/pod<uid-with-dashes>/<container-id>
//   systemd:  /kubepods.slice[/kubepods-<qos>.slice]/kubepods-<qos>-pod<uid_with_underscores>.slice
//             /<runtime>-<container-id>.scope   (runtime: cri-containerd, crio, docker)
// plus variants seen on real nodes: a "kubelet.slice/kubelet-kubepods..." root (kind), a
// containerd "slice:cri-containerd:<id>" leaf, a doubled /kubepods/kubepods, and a prefix before
// kubepods (a nested cgroup or test root). Guaranteed pods have no QoS level in the path.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace tfdiag {

enum class QosClass { kUnknown, kGuaranteed, kBurstable, kBestEffort };
enum class CgroupDriver { kUnknown, kCgroupfs, kSystemd };

// "Guaranteed", "Burstable", "BestEffort" (the pod's status.qosClass spelling), "unknown".
std::string_view QosClassName(QosClass q);
// "cgroupfs", "systemd", "unknown".
std::string_view CgroupDriverName(CgroupDriver d);

struct KubeIdentity {
  bool in_kubepods = false;           // a kubepods segment is present
  std::string pod_uid;                // normalised to dashes ("90d81341-92de-11e7-..."); "" if none
  std::string container_id;           // 64 hex digits (or another runtime's id form); "" if none
  QosClass qos = QosClass::kUnknown;  // kUnknown outside kubepods or without a pod segment
  CgroupDriver driver = CgroupDriver::kUnknown;
};

// Parses a cgroup path ("/kubepods/...", as in /proc/PID/cgroup after "N:ctrl:"). Never fails:
// fields it cannot find stay empty. The container id is also taken from non-Kubernetes paths
// (a docker-<id>.scope, /docker/<id>, an ECS "<32hex>-<10 digits>" task leaf).
KubeIdentity ParseKubepodsPath(std::string_view cgroup_path);

// True for the id forms accepted as container ids: 64 hex digits; a UUID (8-4-4-4-12+);
// ECS "<32 hex>-<10 digits>".
bool LooksLikeContainerId(std::string_view s);

}  // namespace tfdiag
