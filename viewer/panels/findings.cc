// Findings panel: the findings by severity (highest first, as Analyze() orders them); selecting
// one focuses its task and time range in the other panels and shows its evidence and fix.
#include <fmt/format.h>

#include <algorithm>

#include "analyzers/grouping.h"
#include "core/plural.h"
#include "report/text_style.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

// The viewer's font has Latin-1 glyphs only: a run of other characters (a Chinese article title,
// whose English gloss follows it in the reference) becomes "...", not a row of '?'.
std::string Latin1Only(const std::string& s) {
  std::string out;
  bool in_run = false;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    bool latin1 = c < 0x80 || (len == 2 && c <= 0xC3);  // U+0000-U+00FF
    if (latin1) {
      out.append(s, i, len);
      in_run = false;
    } else if (!in_run) {
      out += "...";
      in_run = true;
    }
    i += len;
  }
  return out;
}

void Details(const Finding& f, ViewState* v) {
  ImGui::PushStyleColor(ImGuiCol_Text, colors::ForSeverity(f.severity));
  ImGui::TextWrapped("%s  %s  %s", SeverityName(f.severity).data(), f.rule_id.c_str(),
                     f.subject.c_str());
  ImGui::PopStyleColor();
  ImGui::TextWrapped("%s", f.summary.c_str());
  if (f.range_end > f.range_start) {
    ImGui::TextDisabled("time range: %s (highlighted in the timeline)",
                        FormatNs(static_cast<double>(f.range_end - f.range_start)).c_str());
  }
  if (!f.evidence.empty() &&
      ImGui::BeginTable("##evidence", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupColumn("evidence", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed, 110);
    for (const Figure& e : f.evidence) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", e.label.c_str());
      ImGui::TableNextColumn();
      std::string value;
      // -1 marks a figure the capture lacks (as in JSON; a -1 scaled by its unit too, e.g.
      // -1000000 us); no duration, size, rate or count is negative. Percentages and ratios can
      // be (a change), except -1 itself.
      // Known figures as the text report writes them (its formatter: units, SI sizes, rates).
      if (e.value == -1 || (e.value < 0 && e.unit != "%" && e.unit != "ratio")) {
        value = "-";
      } else {
        value = text::FormatFigure(e);
      }
      ImGui::TextUnformatted(value.c_str());
      v->figures.push_back(e.label + ": " + value);
    }
    ImGui::EndTable();
  }
  if (f.objects.size() > 1) {
    // A grouped finding: every object it covers, with its own summary; objects of one file name
    // it once in the heading (as the text report does), and every cell wraps rather than runs
    // past the panel's edge (issue 39).
    std::string file;
    const std::vector<std::string> subjects = ObjectSubjects(f, &file);
    std::string heading = ObjectsHeading(f);
    if (!file.empty()) heading += " in " + file.substr(file.find_last_of('/') + 1);
    v->figures.push_back(heading + ":");
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s:", heading.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::BeginTable(
            "##objects", 2,
            ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY,
            ImVec2(0, std::min(ImGui::GetTextLineHeightWithSpacing() * (f.objects.size() + 1.5f),
                               200.0f)))) {
      ImGui::TableSetupColumn(f.subject_kind.c_str(), ImGuiTableColumnFlags_WidthStretch, 1);
      ImGui::TableSetupColumn("summary", ImGuiTableColumnFlags_WidthStretch, 2);
      for (size_t i = 0; i < f.objects.size(); ++i) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", subjects[i].c_str());
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", f.objects[i].summary.c_str());
        v->figures.push_back("object: " + subjects[i]);
      }
      ImGui::EndTable();
    }
  }
  // What the fix buys and what the tasks wait for, worded as the text report's (issue 46: the
  // viewer left out what the CLI leads with).
  const std::vector<std::string> impact = text::ImpactLines(f);
  ImGui::PushTextWrapPos(0);
  for (size_t k = 0; k < impact.size(); ++k) {
    if (impact[k].empty()) continue;
    if (k == 0) {
      ImGui::TextWrapped("%s", impact[k].c_str());
    } else {
      ImGui::TextDisabled("%s", impact[k].c_str());
    }
    v->figures.push_back(impact[k]);
  }
  ImGui::PopTextWrapPos();
  const std::vector<const WaitFor*> waits = text::ShownWaits(f);
  if (!waits.empty()) {
    ImGui::TextDisabled("waits:");
    v->figures.push_back("waits:");
    for (size_t k = 0; k < waits.size() && k < 8; ++k) {
      ImGui::Bullet();  // BulletText does not wrap: a wait's line ran past the panel's edge
      ImGui::SameLine();
      ImGui::TextWrapped("%s", waits[k]->text.c_str());
      v->figures.push_back("wait: " + waits[k]->text);
    }
    if (waits.size() > 8) ImGui::TextDisabled("(%zu more)", waits.size() - 8);
  }
  if (!f.ops.empty()) {
    ImGui::TextDisabled("behind it:");
    for (size_t i = 0; i < f.ops.size() && i < 8; ++i) ImGui::BulletText("%s", f.ops[i].c_str());
  }
  if (!f.fix.empty()) {
    ImGui::Spacing();
    ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.6f, 1), "Fix");
    ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0x20, 0x2A, 0x24, 0xFF));
    float h =
        ImGui::CalcTextSize(f.fix.c_str(), nullptr, false, ImGui::GetContentRegionAvail().x - 16)
            .y +
        12;
    ImGui::BeginChild("##fix", ImVec2(0, std::min(h, 220.0f)), true,
                      ImGuiWindowFlags_HorizontalScrollbar);
    // Prose wraps; an indented line is a code snippet, shown whole (scrolled, not wrapped
    // mid-expression) so that it can be copied as it is (issue 48; the text report does the same).
    for (size_t pos = 0; pos <= f.fix.size();) {
      size_t nl = f.fix.find('\n', pos);
      if (nl == std::string::npos) nl = f.fix.size();
      const std::string line = f.fix.substr(pos, nl - pos);
      if (!line.empty() && line[0] == ' ') {
        ImGui::TextUnformatted(line.c_str());
      } else {
        ImGui::TextWrapped("%s", line.c_str());
      }
      pos = nl + 1;
    }
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  ImGui::PushTextWrapPos(0);
  for (const std::string& r : f.references) ImGui::TextDisabled("see %s", Latin1Only(r).c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace

void DrawFindingsPanel(const Snapshot& s, ViewState* v) {
  const auto& findings = s.analysis.findings;
  if (findings.empty()) {
    // As the text report's Findings header: how many rules could judge, not how many ran (most
    // may have had nothing to read).
    const size_t run = s.analysis.rules_run.size();
    const size_t judged = run - std::min(run, s.analysis.rules_not_applicable.size());
    const std::string head = fmt::format("No rule fired ({} of {} could judge these inputs).",
                                         judged, Count(static_cast<int64_t>(run), "analyze rule"));
    ImGui::TextWrapped("%s", head.c_str());
    v->figures.push_back(head);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("The timeline, PS load and tasks panels still show the run.");
    for (const auto& [id, why] : s.analysis.rules_not_applicable) {
      ImGui::TextWrapped("not judged: %s (%s)", id.c_str(), why.c_str());
    }
    ImGui::PopStyleColor();
    return;
  }
  // The text report's opening line: the finding whose fix a trusted prediction says buys the
  // most (text::FixFirst), or that none does.
  std::string fix_first = text::FixFirst(s.analysis);
  while (!fix_first.empty() && fix_first.back() == '\n') fix_first.pop_back();
  if (!fix_first.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(0x80, 0xE6, 0x99, 0xFF));
    ImGui::TextWrapped("%s", fix_first.c_str());
    ImGui::PopStyleColor();
    v->fix_first = fix_first;
  }
  float list_h = std::min(ImGui::GetContentRegionAvail().y * 0.4f,
                          ImGui::GetTextLineHeightWithSpacing() * (findings.size() + 0.5f));
  ImGui::BeginChild("##list", ImVec2(0, list_h), false);
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    ImGui::PushID(static_cast<int>(i));
    ImGui::PushStyleColor(ImGuiCol_Text, colors::ForSeverity(f.severity));
    std::string sev = fmt::format("{:<9}", SeverityName(f.severity));
    bool selected = v->selected == static_cast<int>(i);
    if (ImGui::Selectable(sev.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
      SelectFinding(s, v, selected ? -1 : static_cast<int>(i));
    }
    ImGui::PopStyleColor();
    ImGui::SameLine();
    // The subject as short as it reads (a manifest's file by its name, not its whole path),
    // cut with "..." at the panel's edge; the whole of it and the summary on hover.
    std::string line = f.rule_id + "  " + ShortSubject(f);
    const float room = ImGui::GetContentRegionAvail().x;
    if (ImGui::CalcTextSize(line.c_str()).x > room) {
      while (!line.empty() && ImGui::CalcTextSize((line + "...").c_str()).x > room) {
        line.pop_back();
        while (!line.empty() && (line.back() & 0xC0) == 0x80) line.pop_back();  // whole chars
      }
      line += "...";
    }
    ImGui::TextUnformatted(line.c_str());
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s\n%s", f.subject.c_str(), f.summary.c_str());
    }
    ImGui::PopID();
  }
  ImGui::EndChild();
  ImGui::Separator();
  ImGui::BeginChild("##details", ImVec2(0, 0), false);
  if (v->selected >= 0 && v->selected < static_cast<int>(findings.size())) {
    Details(findings[v->selected], v);
  } else {
    ImGui::TextDisabled("Select a finding to focus its task and time range,");
    ImGui::TextDisabled("and to see its evidence and fix.");
  }
  ImGui::EndChild();
}

}  // namespace tfdiag::view
