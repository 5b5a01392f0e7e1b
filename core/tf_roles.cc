#include "core/tf_roles.h"

#include <absl/strings/ascii.h>

#include <algorithm>

#include "core/checked_number.h"

namespace tfdiag {

std::string TfRoleOf(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(std::string(name));
  for (std::string_view r : kTfRoles) {
    if (lower == r) return lower;
  }
  return "";
}

std::string TfRolesAlternation() {
  std::string out;
  for (std::string_view r : kTfRoles) {
    if (!out.empty()) out += '|';
    out += r;
  }
  return out;
}

bool IsWorkerLikeRole(std::string_view role) {
  return role == "worker" || role == "chief" || role == "master";
}

bool ParseTaskIndex(std::string_view s, int* index) {
  return ParseIntIn(s, 0, kMaxTaskIndex, index);
}

std::optional<TfPodName> ParseTfPodName(std::string_view pod) {
  const size_t dash = pod.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  TfPodName out;
  if (!ParseTaskIndex(pod.substr(dash + 1), &out.index)) return std::nullopt;
  const std::string_view rest = pod.substr(0, dash);  // "<job>-<type>" or "<type>"
  const size_t type_dash = rest.rfind('-');
  if (type_dash == 0) return std::nullopt;  // "-<type>-<index>": no job
  const std::string_view type =
      type_dash == std::string_view::npos ? rest : rest.substr(type_dash + 1);
  if (type.empty() ||
      !std::all_of(type.begin(), type.end(), [](char c) { return absl::ascii_isalnum(c); })) {
    return std::nullopt;
  }
  out.type = std::string(type);
  out.role = TfRoleOf(type);
  if (type_dash != std::string_view::npos) out.job = std::string(rest.substr(0, type_dash));
  return out;
}

bool IsPodOfTfJob(std::string_view pod, std::string_view job) {
  if (job.empty()) return false;
  const std::optional<TfPodName> p = ParseTfPodName(pod);
  return p.has_value() && p->job == job;
}

}  // namespace tfdiag
