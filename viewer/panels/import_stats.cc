// Import statistics panel: per input file what was read, and every skipped or ignored event kind
// with its count and reason (Capture::stats), plus the warnings of a live capture.
#include <fmt/format.h>

#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

void CountTable(const char* id, const char* what, const std::map<std::string, int64_t>& m) {
  if (m.empty()) return;
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn(what, ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("events");
  ImGui::TableHeadersRow();
  for (const auto& [reason, n] : m) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(reason.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(n));
  }
  ImGui::EndTable();
}

}  // namespace

void DrawImportPanel(const Snapshot& s, ViewState*) {
  const Capture& c = s.capture;
  const ImportStats& st = c.stats;
  ImGui::Text(
      "%zu file(s), %zu ops, %zu tasks, %zu devices, %zu steps, %zu cross-task edges; "
      "loaded in %.2f s",
      st.files.size(), c.ops.size(), c.tasks.size(), c.devices.size(), c.steps.size(),
      c.edges.size(), s.load_seconds);
  ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
  if (ImGui::BeginTable("##files", 7, flags)) {
    for (const char* h : {"file", "format", "size", "events", "ops", "skipped", "chunks"}) {
      ImGui::TableSetupColumn(h,
                              h[0] == 'f' && h[1] == 'i' ? ImGuiTableColumnFlags_WidthStretch : 0);
    }
    ImGui::TableHeadersRow();
    for (const FileStats& f : st.files) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(f.path.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s%s", f.format.c_str(), f.gzip ? " (gzip)" : "");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatBytes(static_cast<double>(f.bytes)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(f.events));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(f.ops));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(f.skipped));
      ImGui::TableNextColumn();
      ImGui::Text("%d", f.chunks);
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
  if (st.skipped.empty()) {
    ImGui::TextDisabled("No event was skipped.");
  } else {
    ImGui::Text("Skipped (malformed) events: %lld", static_cast<long long>(st.TotalSkipped()));
    CountTable("##skipped", "reason", st.skipped);
  }
  if (!st.ignored.empty()) {
    ImGui::Text("Ignored (well-formed, not used):");
    CountTable("##ignored", "kind", st.ignored);
  }
  if (st.unresolved_inputs > 0) {
    ImGui::Text("Unresolved partition inputs (producer not in the trace): %lld",
                static_cast<long long>(st.unresolved_inputs));
  }
  for (const std::string& w : c.meta.warnings) {
    ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "warning: %s", w.c_str());
  }
}

}  // namespace tfdiag::view
