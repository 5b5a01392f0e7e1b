#include "collectors/procfs/kubepods.h"

#include <cctype>
#include <vector>

#include "core/checked_number.h"

namespace tfdiag {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

bool AllHex(std::string_view s) {
  for (char c : s) {
    if (!isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return !s.empty();
}

// A pod UID as the kubelet writes it: a UUID, or a 32-hex hash for static pods; we accept any
// run of letters, digits, '-' and '_' (normalised to '-').
std::string NormaliseUid(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '_') c = '-';
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-') return std::string();
    out.push_back(c);
  }
  return out;
}

std::string ContainerIdFromLeaf(std::string_view leaf) {
  // containerd's systemd form "<pod>.slice:cri-containerd:<id>".
  size_t colon = leaf.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view id = leaf.substr(colon + 1);
    return LooksLikeContainerId(id) ? std::string(id) : std::string();
  }
  if (EndsWith(leaf, ".scope")) leaf.remove_suffix(6);
  if (LooksLikeContainerId(leaf)) return std::string(leaf);
  // "<runtime>-<id>": cri-containerd-, crio-, crio-conmon-, docker-, libpod-.
  size_t dash = leaf.rfind('-');
  if (dash != std::string_view::npos) {
    std::string_view id = leaf.substr(dash + 1);
    if (id.size() == 64 && AllHex(id)) return std::string(id);
  }
  return std::string();
}

}  // namespace

std::string_view QosClassName(QosClass q) {
  switch (q) {
    case QosClass::kGuaranteed:
      return "Guaranteed";
    case QosClass::kBurstable:
      return "Burstable";
    case QosClass::kBestEffort:
      return "BestEffort";
    case QosClass::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view CgroupDriverName(CgroupDriver d) {
  switch (d) {
    case CgroupDriver::kCgroupfs:
      return "cgroupfs";
    case CgroupDriver::kSystemd:
      return "systemd";
    case CgroupDriver::kUnknown:
      break;
  }
  return "unknown";
}

bool LooksLikeContainerId(std::string_view s) {
  if (s.size() == 64 && AllHex(s)) return true;
  // ECS: "<32 hex>-<10 digits>".
  if (s.size() == 43 && s[32] == '-' && AllHex(s.substr(0, 32)) && AllDigits(s.substr(33))) {
    return true;
  }
  // UUID 8-4-4-4-12 (the last group may be longer).
  static constexpr size_t kGroups[] = {8, 4, 4, 4};
  size_t pos = 0;
  for (size_t g : kGroups) {
    if (pos + g >= s.size() || !AllHex(s.substr(pos, g)) || s[pos + g] != '-') return false;
    pos += g + 1;
  }
  return s.size() - pos >= 12 && AllHex(s.substr(pos));
}

KubeIdentity ParseKubepodsPath(std::string_view path) {
  std::vector<std::string_view> segs;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view seg = path.substr(0, slash);
    if (!seg.empty()) segs.push_back(seg);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  KubeIdentity k;
  for (std::string_view seg : segs) {
    // systemd driver: "kubepods.slice", "kubepods-burstable.slice",
    // "kubepods-besteffort-pod<uid>.slice[:runtime:id]", "kubelet-kubepods-...".
    std::string_view name = seg;
    size_t slice = name.find(".slice");
    bool is_slice = slice != std::string_view::npos;
    if (is_slice) name = name.substr(0, slice);
    if (StartsWith(name, "kubelet-")) name.remove_prefix(8);
    if (is_slice && StartsWith(name, "kubepods")) {
      k.in_kubepods = true;
      k.driver = CgroupDriver::kSystemd;
      if (name.find("-besteffort") != std::string_view::npos) k.qos = QosClass::kBestEffort;
      if (name.find("-burstable") != std::string_view::npos) k.qos = QosClass::kBurstable;
      size_t pod = name.find("-pod");
      if (pod != std::string_view::npos) k.pod_uid = NormaliseUid(name.substr(pod + 4));
      continue;
    }
    // cgroupfs driver: "kubepods", "besteffort", "burstable", "pod<uid>".
    if (seg == "kubepods") {
      k.in_kubepods = true;
      if (k.driver == CgroupDriver::kUnknown) k.driver = CgroupDriver::kCgroupfs;
      continue;
    }
    if (!k.in_kubepods) continue;
    if (seg == "besteffort") {
      k.qos = QosClass::kBestEffort;
    } else if (seg == "burstable") {
      k.qos = QosClass::kBurstable;
    } else if (StartsWith(seg, "pod") && seg.size() > 3 && k.pod_uid.empty()) {
      k.pod_uid = NormaliseUid(seg.substr(3));
    }
  }
  if (!segs.empty()) k.container_id = ContainerIdFromLeaf(segs.back());
  if (k.in_kubepods && !k.pod_uid.empty() && k.qos == QosClass::kUnknown) {
    k.qos = QosClass::kGuaranteed;
  }
  return k;
}

}  // namespace tfdiag
