// The analysis document's "outlook" (issue 44 item 3; docs/json.md "outlook"): the scaling
// outlook from one profile (analyzers/outlook.h) over a RapidJSON writer. Internal to
// report/json_report.cc.
#pragma once

#include "analyzers/outlook.h"
#include "report/json_writer.h"

namespace tfdiag::json {

// "saturates_at": {workers, resource, kind, task, utilisation}, or null when efficiency stays at
// or above kOutlookMinEfficiency up to checked_up_to.
template <typename W>
void WriteOutlookSaturation(Json<W>& j, std::string_view key, const OutlookSaturation& s) {
  j.Key(key);
  if (s.workers <= 0) {
    j.w_->Null();
    return;
  }
  j.w_->StartObject();
  j.Int("workers", s.workers);
  j.Str("resource", s.resource);
  j.Str("kind", s.kind);
  j.Str("task", s.task);
  j.Num("utilisation", s.utilisation);
  j.w_->EndObject();
}

// "outlook": null when the capture has no worker steps or no PS; else {captured_workers,
// captured_steps_per_s, points[{workers, steps_per_s, steps_per_s_after_fix (null without a Fix
// first), efficiency}], saturates_at, saturates_at_after_fix, checked_up_to, fix_first ({rule,
// subject} or null), confidence ("high", "medium", "low"; "none" when withheld),
// confidence_why, withheld ("" when predicted), assumptions[], verdict}.
template <typename W>
void WriteOutlookJson(Json<W>& j, const Outlook& o) {
  j.Key("outlook");
  if (!o.set && o.withheld.empty()) {
    j.w_->Null();
    return;
  }
  j.w_->StartObject();
  j.Int("captured_workers", o.captured_workers);
  j.NumOrUnknown("captured_steps_per_s", o.set ? o.captured_steps_per_s : -1);
  j.Key("points");
  j.w_->StartArray();
  for (const OutlookPoint& p : o.points) {
    j.w_->StartObject();
    j.Int("workers", p.workers);
    j.Num("steps_per_s", p.steps_per_s);
    j.Key("steps_per_s_after_fix");
    if (p.steps_per_s_after_fix >= 0) {
      j.w_->Double(p.steps_per_s_after_fix);
    } else {
      j.w_->Null();
    }
    j.Num("efficiency", p.efficiency);
    j.w_->EndObject();
  }
  j.w_->EndArray();
  WriteOutlookSaturation(j, "saturates_at", o.saturates_at);
  WriteOutlookSaturation(j, "saturates_at_after_fix", o.saturates_at_after_fix);
  j.Int("checked_up_to", o.checked_up_to);
  j.Key("fix_first");
  if (o.fix_rule.empty()) {
    j.w_->Null();
  } else {
    j.w_->StartObject();
    j.Str("rule", o.fix_rule);
    j.Str("subject", o.fix_subject);
    j.w_->EndObject();
  }
  j.Str("confidence", o.set ? o.confidence : "none");
  j.Str("confidence_why", o.confidence_why);
  j.Str("withheld", o.withheld);
  j.Strings("assumptions", o.assumptions);
  j.Str("verdict", o.verdict);
  j.w_->EndObject();
}

}  // namespace tfdiag::json
