#include "collectors/load_inputs.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "collectors/runmetadata/run_metadata_reader.h"
#include "collectors/timeline/timeline_pool.h"
#include "collectors/timeline/timeline_reader.h"
#include "collectors/xplane/log_archive.h"
#include "collectors/xplane/log_dir.h"
#include "collectors/xplane/profile_format.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/bundle.h"
#include "core/capture_builder.h"
#include "core/escape.h"
#include "core/stopwatch.h"

namespace tfdiag {

namespace {

// What identifies an input's bytes: its file (device, inode) and, for a copy of the same bytes
// in another file (e.g. two pipes of one file, spooled), its size and a hash of its first and
// last 64 KiB.
struct InputId {
  dev_t dev = 0;
  ino_t ino = 0;
  int64_t size = -1;
  std::optional<uint64_t> hash;  // computed when another input has the same size (ContentHash)
};

// FNV-1a over `n` bytes.
uint64_t Fnv1a(const char* p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h;
}

// Nullopt when the input cannot be read (the reader then reports it).
std::optional<InputId> IdOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return InputId{st.st_dev, st.st_ino, static_cast<int64_t>(st.st_size), std::nullopt};
}

// The hash of the input's first and last 64 KiB, read once: only inputs of one size are compared
// by content, so a job's per-worker files (sizes differ) are never hashed.
uint64_t ContentHash(const std::string& path, InputId* id) {
  if (id->hash) return *id->hash;
  uint64_t h = 14695981039346656037ull;
  constexpr int64_t kPart = 64 << 10;
  std::ifstream in(path, std::ios::binary);
  std::string buf(kPart, '\0');
  in.read(buf.data(), kPart);
  h = Fnv1a(buf.data(), static_cast<size_t>(in.gcount()), h);
  if (id->size > kPart) {
    in.clear();
    in.seekg(std::max(kPart, id->size - kPart));
    in.read(buf.data(), kPart);
    h = Fnv1a(buf.data(), static_cast<size_t>(in.gcount()), h);
  }
  id->hash = h;
  return h;
}

// A host file named as another format of a capture read (log_dir.h SameCaptureInAnotherFormat):
// read only if its time range shows another profiling session.
struct OtherFormat {
  std::string path, name;  // the file, as read and as given
  std::string kept_path, kept_name;
  size_t given = 0;  // the input it came from
};

// "host 'h', run 'r'" of a host file.
std::string HostAndRun(const std::string& path) {
  const std::filesystem::path p(path);
  return fmt::format("host '{}', run '{}'", ParseHostFileName(p.filename().string())->host,
                     p.parent_path().filename().string());
}

// How a host file repeats another format's capture (DuplicateInput::how); `timed`: its first op
// lies within the time range of the file read.
std::string SameCaptureHow(const std::string& path, bool timed) {
  return fmt::format("the same capture ({}{}) in another format", HostAndRun(path),
                     timed ? ", time range" : "");
}

// A plain (not gzip) JSON timeline by its first bytes: what the pool of timelines reads.
bool IsPlainTimelineHead(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return false;
  }
  if (LooksLikeBundle(head) || SniffProfile(head) != ProfileFormat::kNone) return false;
  const size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (head[first] == '{' || head[first] == '[');
}

// The hosts of a run's files ("h1, h2").
std::string HostsOf(const ProfileRun& r) {
  std::vector<std::string> hosts;
  for (const std::string& f : r.files) {
    if (std::optional<HostFileName> h =
            ParseHostFileName(std::filesystem::path(f).filename().string())) {
      hosts.push_back(Printable(h->host));
    }
  }
  return fmt::format("{}", fmt::join(hosts, ", "));
}

// The note on what a directory given held and which runs are read: each log directory with its
// runs (up to 12 listed), then the run(s) read with their hosts.
void NoteRunsFound(const std::string& name, const std::string& dir, const std::string& run_arg,
                   const std::vector<ProfileRun>& read, const LoadOptions& options) {
  const std::vector<std::string>& all = read[0].runs;
  if (run_arg == "all") {
    std::vector<std::string> parts;
    for (const ProfileRun& r : read) {
      parts.push_back(fmt::format("'{}' ({})", Printable(r.name), HostsOf(r)));
    }
    options.notes->push_back(fmt::format(
        "{}: read every profile run ({}), each profiling session a capture of its own: {}", name,
        read.size(), fmt::join(parts, "; ")));
    return;
  }
  const ProfileRun& r = read[0];
  if (r.timelines) {
    options.notes->push_back(
        fmt::format("{}: read its {} timeline(s) as one run", name, r.files.size()));
    return;
  }
  const std::string where = r.log_dir.empty() || r.log_dir == dir
                                ? std::string()
                                : fmt::format(" in log directory {}", Printable(r.log_dir));
  if (all.size() <= 1) {
    options.notes->push_back(fmt::format("{}: read profile run '{}'{} ({} host files: {})", name,
                                         Printable(r.name), where, r.files.size(), HostsOf(r)));
    return;
  }
  std::vector<std::string> shown(all.begin(), all.begin() + std::min<size_t>(all.size(), 12));
  if (all.size() > shown.size()) shown.push_back(fmt::format("{} more", all.size() - 12));
  options.notes->push_back(fmt::format(
      "{}: read profile run '{}'{} ({} host files: {}){}; {} runs found (oldest first): {} "
      "(--run NAME or PATH picks another, --run all reads every session as a capture of its "
      "own)",
      name, Printable(r.name), where, r.files.size(), HostsOf(r),
      run_arg.empty() ? ", the latest" : "", all.size(), fmt::join(shown, ", ")));
}

// `s` with every `from` replaced by `to`.
std::string ReplaceAllIn(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// Replaces each directory by the host files of its profile run; `names` follows. Profiler tool
// files (log_dir.h), in a run or given by name, are left out with a note; so is a host's capture
// in a second format, in a run (`other`: read later if it is another session).
Status ExpandDirectories(const std::vector<std::string>& in_paths,
                         const std::vector<std::string>& in_names, const LoadOptions& options,
                         std::vector<std::string>* paths, std::vector<std::string>* names,
                         std::vector<size_t>* given, std::vector<OtherFormat>* other) {
  std::vector<std::pair<std::string, std::string>> tools;  // {file, what}
  for (size_t i = 0; i < in_paths.size(); ++i) {
    const std::string& name = i < in_names.size() ? in_names[i] : in_paths[i];
    if (!IsDirectory(in_paths[i])) {
      const std::string tool = ProfilerToolFile(std::filesystem::path(name).filename().string());
      if (!tool.empty()) {
        tools.emplace_back(name, tool);
        continue;
      }
      paths->push_back(in_paths[i]);
      names->push_back(name);
      given->push_back(i);
      continue;
    }
    StatusOr<std::vector<ProfileRun>> runs = FindProfileRuns(in_paths[i], options.run);
    if (!runs.ok()) return runs.status();
    if (options.notes != nullptr) NoteRunsFound(name, in_paths[i], options.run, *runs, options);
    for (const ProfileRun& run : *runs) {
      for (const SkippedFile& f : run.skipped) {
        if (!f.tool.empty()) tools.emplace_back(f.path, f.tool);
        if (!f.same_as.empty()) other->push_back({f.path, f.path, f.same_as, f.same_as, i});
      }
      for (const std::string& f : run.files) {
        paths->push_back(f);
        names->push_back(f);
        given->push_back(i);
      }
    }
  }
  if (paths->empty() && !tools.empty()) {
    // Nothing but tool files: nothing to analyze, and where the profile is.
    return InvalidInput(
        "{}: {}, not a profile: nothing to analyze; the profiler's trace is expected in "
        "<log dir>/plugins/profile/<run>/<host>.xplane.pb (give the log directory or that file)",
        tools[0].first,
        tools[0].second.rfind("a ", 0) == 0
            ? tools[0].second
            : fmt::format("a profiler tool file ({})", tools[0].second));
  }
  if (!tools.empty() && options.notes != nullptr) {
    // One entry per kind of tool file (a 3-host run has 5 kinds, 15 files): its first file and
    // how many more of that kind.
    std::vector<std::pair<std::string, int>> kinds;  // {"<first file> (<what>)", count}
    std::vector<std::string> seen;
    for (const auto& [file, what] : tools) {
      const auto it = std::find(seen.begin(), seen.end(), what);
      if (it != seen.end()) {
        ++kinds[static_cast<size_t>(it - seen.begin())].second;
        continue;
      }
      seen.push_back(what);
      kinds.emplace_back(fmt::format("{} ({})", file, what), 1);
    }
    std::vector<std::string> parts;
    for (const auto& [first, n] : kinds) {
      parts.push_back(n > 1 ? fmt::format("{} and {} more like it", first, n - 1) : first);
    }
    options.notes->push_back(fmt::format(
        "skipped {} profiler tool file(s), summaries for TensorBoard's tools, not traces: {}",
        tools.size(), fmt::join(parts, "; ")));
  }
  return OkStatus();
}

}  // namespace

StatusOr<Capture> LoadInputs(const std::vector<std::string>& given, const LoadOptions& options) {
  if (given.empty()) return UsageError("no input files");
  Stopwatch watch;
  CaptureBuilder builder;
  std::vector<std::string> paths, names;
  std::vector<size_t> given_index;  // per file read: the index of the input it came from
  std::vector<OtherFormat> other;   // host files named as another format of a capture
  // Tar archives given (packed log directories) are unpacked into private temporary directories,
  // removed when this returns, and read as those directories; what the report names by a path
  // below one names it below the archive instead ("logs.tar.gz/train/plugins/...").
  std::vector<std::unique_ptr<UnpackedArchive>> unpacked;
  std::vector<std::pair<std::string, std::string>> renames;  // {temporary dir, archive name}
  std::vector<std::string> inputs = given;
  std::vector<std::string> input_names = options.names;
  input_names.resize(given.size());
  for (size_t i = 0; i < given.size(); ++i) {
    if (input_names[i].empty()) input_names[i] = given[i];
    if (!IsTarArchive(given[i])) continue;
    StatusOr<std::unique_ptr<UnpackedArchive>> u = UnpackedArchive::Unpack(given[i]);
    if (!u.ok()) {
      return Status(u.status().code(),
                    ReplaceAllIn(std::string(u.status().message()), given[i], input_names[i]));
    }
    inputs[i] = (*u)->dir();
    renames.emplace_back((*u)->dir(), input_names[i]);
    if (options.notes != nullptr) {
      options.notes->push_back(fmt::format(
          "{}: a tar archive, unpacked ({} entries, {} bytes) into a private temporary directory, "
          "read as the log directory it holds, and removed again",
          input_names[i], (*u)->entries(), (*u)->bytes()));
    }
    unpacked.push_back(std::move(*u));
  }
  const size_t notes_before = options.notes != nullptr ? options.notes->size() : 0;
  auto rename = [&](std::string s) {
    for (const auto& [dir, archive] : renames) s = ReplaceAllIn(std::move(s), dir, archive);
    return s;
  };
  struct RenameNotes {  // on every return: notes name the archive, never the temporary dir
    std::function<void()> fn;
    ~RenameNotes() { fn(); }
  } rename_notes{[&] {
    if (options.notes == nullptr || renames.empty()) return;
    for (size_t k = notes_before; k < options.notes->size(); ++k) {
      (*options.notes)[k] = rename((*options.notes)[k]);
    }
  }};
  {
    Status expanded =
        ExpandDirectories(inputs, input_names, options, &paths, &names, &given_index, &other);
    if (!expanded.ok()) return Status(expanded.code(), rename(std::string(expanded.message())));
  }
  for (std::string& n : names) n = rename(std::move(n));
  HostMapper hosts(options.cluster, options.k8s);
  hosts.CollectNotes(true);  // one note per log directory, said below when there is something
  // Per file: the earlier file it repeats (an input given twice, the same file or the same bytes,
  // is read once) and its first bytes (what it is).
  std::vector<std::optional<InputId>> ids;
  std::vector<bool> repeated(paths.size(), false);
  std::vector<std::string> heads(paths.size());
  // A host's capture given in two formats (run/h.xplane.pb run/h.trace.json.gz): the XSpace.
  const std::vector<size_t> other_format = SameCaptureInAnotherFormat(paths);
  auto read_head = [&](size_t i) {
    char head[256] = {0};
    std::ifstream probe(paths[i], std::ios::binary);
    probe.read(head, sizeof head);
    heads[i].assign(head, static_cast<size_t>(probe.gcount()));
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    ids.push_back(IdOf(paths[i]));
    if (other_format[i] != SIZE_MAX) {
      other.push_back(
          {paths[i], names[i], paths[other_format[i]], names[other_format[i]], given_index[i]});
      repeated[i] = true;
      continue;
    }
    for (size_t j = 0; j < i && ids[i] && !repeated[i]; ++j) {
      if (!ids[j]) continue;
      const bool same_file = ids[j]->dev == ids[i]->dev && ids[j]->ino == ids[i]->ino;
      if (same_file || (ids[j]->size == ids[i]->size &&
                        ContentHash(paths[j], &*ids[j]) == ContentHash(paths[i], &*ids[i]))) {
        builder.stats().duplicates.push_back(
            {names[i], names[j],
             same_file ? "same file (device and inode)"
                       : "identical content (size, first and last 64 KiB)"});
        repeated[i] = true;
      }
    }
    if (!repeated[i]) read_head(i);
  }
  // Each host file's profiling session (its run directory), timed once per directory: TF 2.4+
  // timestamps restart near zero in every session, so each session is placed at its wall time
  // (log_dir.h SessionOfHostFile) and is a capture of its own.
  std::map<std::string, ProfileSession> sessions;  // by run directory
  auto session_ns = [&](const std::string& path) -> int64_t {
    const std::filesystem::path p(path);
    if (!ParseHostFileName(p.filename().string())) return 0;
    auto [it, fresh] = sessions.try_emplace(p.parent_path().lexically_normal().string());
    if (fresh) it->second = SessionOfHostFile(path);
    return it->second.wall_ns;
  };
  // Plain timelines, when there are several, are read on one pool of threads (files and chunks
  // of files alike) and merged here in order (collectors/timeline/timeline_pool.h).
  std::vector<std::string> pooled_paths;
  std::vector<size_t> pooled(paths.size(), SIZE_MAX);  // index in the pool, by file
  if (options.threads > 1) {
    for (size_t i = 0; i < paths.size(); ++i) {
      // A host file in a profile run is read alone (its session's clock: ReadTimeline).
      if (!repeated[i] && IsPlainTimelineHead(heads[i]) &&
          !ParseHostFileName(std::filesystem::path(paths[i]).filename().string())) {
        pooled[i] = pooled_paths.size();
        pooled_paths.push_back(paths[i]);
      }
    }
  }
  std::optional<TimelinePool> pool;
  if (pooled_paths.size() >= 2) pool.emplace(pooled_paths, options.threads, true);
  std::map<std::string, std::pair<TimeNs, TimeNs>> range_of;  // by path: the ops' time range
  auto read = [&](size_t i) -> Status {
    const std::string& name = names[i];
    TimelineReadOptions ro;
    ro.threads = options.threads;
    ro.hosts = &hosts;  // a TF2 trace-viewer JSON's host, as an XSpace's
    ro.notes = options.notes;
    ro.session_wall_ns = session_ns(paths[i]);
    if (options.progress) {
      ro.progress = [&, i](int64_t done, int64_t total) {
        options.progress(given_index[i], paths[i], done, total);
      };
    }
    // Errors name the input as given.
    auto named = [&](const Status& s) {
      if (s.ok() || name == paths[i]) return s;
      std::string m = s.message();
      for (size_t at = m.find(paths[i]); at != std::string::npos; at = m.find(paths[i], at)) {
        m.replace(at, paths[i].size(), name);
        at += name.size();
      }
      return Status(s.code(), m);
    };
    if (IsTarArchive(paths[i])) {
      return InvalidInput(
          "{}: a tar archive{} (a packed log directory?), not a profile: unpack it with tar -xzf "
          "first and give the directory",
          name,
          heads[i].size() >= 2 && static_cast<unsigned char>(heads[i][0]) == 0x1f ? " (gzip)" : "");
    }
    const size_t before = builder.stats().files.size();
    const std::string_view head_view(heads[i]);
    const ProfileFormat pf = SniffProfile(head_view);
    ProfileReadOptions po;
    po.hosts = &hosts;
    po.notes = options.notes;
    po.session_wall_ns = ro.session_wall_ns;
    po.progress = ro.progress;
    if (pf == ProfileFormat::kNone && !LooksLikeBundle(head_view)) {
      // A timeline: the pool's path as well as ReadTimeline's refuses a bad host file name.
      TFDIAG_RETURN_IF_ERROR(named(CheckTraceJsonHostName(paths[i])));
    }
    if (LooksLikeBundle(head_view)) {
      TFDIAG_RETURN_IF_ERROR(named(ReadBundle(paths[i], &builder)));
    } else if (pf == ProfileFormat::kXSpace) {
      TFDIAG_RETURN_IF_ERROR(named(ReadXSpace(paths[i], &builder, po)));
    } else if (pf == ProfileFormat::kProfilerTrace) {
      TFDIAG_RETURN_IF_ERROR(named(ReadProfilerTrace(paths[i], &builder, po)));
    } else if (pf != ProfileFormat::kNone) {
      TFDIAG_RETURN_IF_ERROR(named(ReadRunMetadata(paths[i], pf, &builder)));
    } else if (pool && pooled[i] != SIZE_MAX &&
               pool->Take(pooled[i], &builder, ro.progress, ro.hosts, ro.notes)) {
      // Read by the pool (else by ReadTimeline, the reference for errors).
    } else {
      TFDIAG_RETURN_IF_ERROR(named(ReadTimeline(paths[i], &builder, ro)));
    }
    for (size_t k = before; k < builder.stats().files.size(); ++k) {
      builder.stats().files[k].path = name;
    }
    // Its time range: one capture with the files it overlaps.
    // Named in the notes on captures by its profile run when it is a host file of one.
    const std::filesystem::path fp(paths[i]);
    range_of[paths[i]] = builder.EndInput(
        ParseHostFileName(fp.filename().string()) && fp.has_parent_path()
            ? fmt::format("run '{}'", Printable(fp.parent_path().filename().string()))
            : name);
    return OkStatus();
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!repeated[i]) TFDIAG_RETURN_IF_ERROR(read(i));
  }
  // A host file in another format is the same capture ("host, run, time range") when its first
  // event lies within the time range of the ops of the file read, widened by that range's length
  // (at least 1 s): the trace JSON also holds TraceMe markers and derived rows, which may start
  // before the first op. Else it is another profiling session of the host (files of two
  // sessions copied into one run), read as a capture of its own. A file whose first event cannot
  // be found cheaply (not a trace JSON) counts as the same capture.
  for (const OtherFormat& o : other) {
    std::optional<TimeNs> first;
    auto kept = range_of.find(o.kept_path);
    if (kept != range_of.end() && kept->second.first <= kept->second.second) {
      StatusOr<std::optional<int64_t>> f = FirstCompleteEventNs(o.path);
      if (f.ok() && f->has_value()) first = OnWallClock(**f, session_ns(o.path));
    }
    const TimeNs slack =
        first ? std::max<TimeNs>(1'000'000'000, kept->second.second - kept->second.first) : 0;
    if (!first || (*first >= kept->second.first - slack && *first <= kept->second.second + slack)) {
      builder.stats().duplicates.push_back(
          {o.name, o.kept_name, SameCaptureHow(o.path, first.has_value())});
      continue;
    }
    if (options.notes != nullptr) {
      options.notes->push_back(fmt::format(
          "{}: {} as {}, but its first event is {:.1f} s {} that file's time range: another "
          "profiling session, read as a capture of its own",
          o.name, HostAndRun(o.path), o.kept_name,
          std::abs(*first < kept->second.first ? kept->second.first - *first
                                               : *first - kept->second.second) /
              1e9,
          *first < kept->second.first ? "before" : "after"));
    }
    paths.push_back(o.path);
    names.push_back(o.name);
    given_index.push_back(o.given);
    heads.emplace_back();
    pooled.push_back(SIZE_MAX);
    read_head(paths.size() - 1);
    TFDIAG_RETURN_IF_ERROR(read(paths.size() - 1));
  }
  if (sessions.size() > 1 && options.notes != nullptr) {
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [dir, ss] : sessions) {
      order.emplace_back(ss.wall_ns, fmt::format("'{}' ({})", Printable(ss.run), ss.how));
    }
    std::sort(order.begin(), order.end());
    std::vector<std::string> parts;
    for (const auto& [ns, what] : order) parts.push_back(what);
    options.notes->push_back(fmt::format(
        "{} profiling sessions (run directories), each a capture of its own placed at its wall "
        "time, never two tasks: {}",
        sessions.size(), fmt::join(parts, ", ")));
  }
  const double read_s = watch.Lap();
  Capture c = builder.Finish(options.threads);
  // How hosts were read, one note per log directory; not above an input with nothing to analyze
  // (the caller's error says all there is).
  if (options.notes != nullptr && (!c.ops.empty() || !c.horovod.empty() || !c.processes.empty())) {
    for (std::string& n : hosts.HostNotes()) options.notes->push_back(std::move(n));
  }
  if (!renames.empty()) {
    for (std::string& n : c.stats.notes) n = rename(std::move(n));
    for (FileStats& f : c.stats.files) f.path = rename(std::move(f.path));
    for (DuplicateInput& d : c.stats.duplicates) {
      d.path = rename(std::move(d.path));
      d.same_as = rename(std::move(d.same_as));
    }
    for (XprofCheck& x : c.stats.xprof_checks) {
      x.file = rename(std::move(x.file));
      x.tool_file = rename(std::move(x.tool_file));
    }
  }
  const double finish_s = watch.Lap();
  if (options.read_s != nullptr) *options.read_s = read_s;
  if (options.finish_s != nullptr) *options.finish_s = finish_s;
  return c;
}

}  // namespace tfdiag
