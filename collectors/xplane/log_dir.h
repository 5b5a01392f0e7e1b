// Finding the profile of a TensorBoard log directory: the TF2 profiler writes
// `<logdir>/plugins/profile/<run>/<host>.xplane.pb` (TF 2.0-2.1: `<host>.trace`; TF 2.2-2.3 also
// `<host>.trace.json.gz`, the trace viewer's JSON, with or without the XSpace), one file per
// profiled host, a run per capture named by its start time ("2024_05_01_12_00_00", TF 2.0:
// "2019-10-07_12-49-01"); the Keras TensorBoard callback writes under `<logdir>/train/`. Beside
// them sit the profiler's tool files (`<host>.overview_page.pb`, `.input_pipeline.pb`, ...:
// summaries TensorBoard's tools show, not traces), which are skipped. Sources: TensorFlow's
// `tensorflow/core/profiler/rpc/client/save_profile.cc` (file names per host and run) and the
// TensorBoard profile plugin's `profile_plugin.py` (its TOOLS map: tool name -> file suffix).
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// A file left out of a profile run, and why (for a note): a tool file, or a host's capture in a
// second format.
struct SkippedFile {
  std::string path;
  std::string tool;     // what tool file it is (ProfilerToolFile), or ""
  std::string same_as;  // the host file read instead (another format of its capture), or ""
};

struct ProfileRun {
  std::string dir;                   // the run's directory
  std::string name;                  // the run's name (its directory's name)
  std::string log_dir;               // the log directory holding plugins/profile/<run>, or ""
  std::vector<std::string> files;    // its host files, one per host (HostFileName), sorted
  std::vector<std::string> runs;     // every run found, sorted (for messages)
  std::vector<SkippedFile> skipped;  // tool files and other formats of a host's capture
  // A directory of timelines (*.json, *.json.gz: TF1 Timeline files, one per worker or step),
  // read as one run; `files` are the timelines.
  bool timelines = false;
};

// How deep below a directory given to `analyze` profile runs are looked for (directories, not
// counting the run's own): the profiler tutorial's logs/fit/<timestamp>/train/plugins/profile/<run>
// is 6 below logs/. Symbolic links to directories are not followed on the way down, and at most
// kMaxLogDirEntries directory entries are visited.
constexpr int kMaxLogDirDepth = 8;
constexpr int kMaxLogDirEntries = 200'000;

// The wall time a profile run's name says it started, ns since the Unix epoch:
// "2020_12_22_03_42_42" (TF >= 2.2, save_profile.cc GetCurrentTimeStampAsString
// "%Y_%m_%d_%H_%M_%S") or "2019-10-07_12-49-01" (TF 2.0-2.1), read as UTC (the profiler writes the
// host's local time, which the directory does not record: gaps between runs of one host are right,
// the absolute time may be hours off). Nullopt for other names.
std::optional<int64_t> RunNameWallNs(std::string_view run_name);

// A profiling session: the run directory of a host file (`<run>/<host>.xplane.pb`), named and
// timed. `wall_ns`: RunNameWallNs of the directory's name; else the wall time in the name of the
// latest TensorBoard events file beside plugins/ (`events.out.tfevents.<seconds>.<host>...`,
// written as each Keras fit() starts) not after the host file's modification time; else that
// modification time (`how` says which). Used to place sessions whose timestamps
// restart near zero (TF 2.4+ XSpace) on one time line.
struct ProfileSession {
  std::string run;  // the run directory's name
  int64_t wall_ns = 0;
  std::string how;  // "run name", "events file <name>", "file modification time"
};
ProfileSession SessionOfHostFile(const std::string& path);

// A host file's name split: `<host>.xplane.pb` (rank 0), `<host>.trace` (TF 2.0-2.1 profiler
// Trace, rank 1), `<host>.trace.json.gz` (rank 2), `<host>.trace.json` (rank 3). One host's
// files in one run are one capture in several formats; the lowest rank is read (the XSpace
// holds the most: the trace JSON is converted from it).
// The host-file suffixes by rank, the one table the log-directory search, the host mapping
// (host_tasks.h HostOfProfileFile) and the trace JSON reader's host check read.
inline constexpr std::string_view kHostFileSuffixes[] = {".xplane.pb", ".trace", ".trace.json.gz",
                                                         ".trace.json"};
// "*.xplane.pb, *.trace, *.trace.json.gz, *.trace.json", for messages.
std::string HostFilePatterns();
struct HostFileName {
  std::string host;    // the name before the suffix, e.g. "10.0.0.1_6009"
  std::string suffix;  // ".xplane.pb", ".trace", ".trace.json.gz", ".trace.json"
  int rank = 0;
};
std::optional<HostFileName> ParseHostFileName(std::string_view filename);

// What a profiler tool file is by its name (`filename` without its directory), e.g.
// "overview_page" for `host.overview_page.pb`, "events file" for `events.out.tfevents.*`; ""
// for any other name. Tool files: overview_page.pb, input_pipeline.pb, tensorflow_stats.pb,
// tf_stats.pb, kernel_stats.pb, pod_viewer.pb, memory_profile.json.gz, *.hlo_proto.pb and the
// TensorBoard summary files events.out.tfevents.*.
std::string ProfilerToolFile(std::string_view filename);

// For each of `paths`, the index of the path it repeats in another format (the same host file
// name in the same directory, a lower rank: ParseHostFileName), or SIZE_MAX when it is read.
std::vector<size_t> SameCaptureInAnotherFormat(const std::vector<std::string>& paths);

// `dir` may be a log directory (plugins/profile/ anywhere below it, kMaxLogDirDepth deep: logs/,
// logs/fit/, logs/fit/<timestamp>/train/), a plugins/profile directory, a directory of runs, or
// a run directory itself. `run` picks runs: "" the latest (by RunNameWallNs, else name; the run
// of the greatest time), "all" every run in time order, else the run whose name is `run` or whose
// path ends in `run` ("fit/20201222-034228/train/2020_12_22_03_42_42"). Errors (kInvalidInput):
// "<dir>: no profile runs (expected plugins/profile/<run>/<host>.xplane.pb below it)" for a
// directory without one (a directory that holds timelines, *.json or *.json.gz, and no run is
// one run of those timelines: ProfileRun::timelines); "<dir>: no run named 'x' (runs: a, b)"; "<run
// dir>: no host files
// (HostFilePatterns()) in this profile run"; a name that several log
// directories hold (train/, validation/) is ambiguous: the error lists their paths.
StatusOr<std::vector<ProfileRun>> FindProfileRuns(const std::string& dir, const std::string& run);
// FindProfileRuns for one run (`run` is not "all").
StatusOr<ProfileRun> FindProfileRun(const std::string& dir, const std::string& run);

// True when `path` is a directory.
bool IsDirectory(const std::string& path);

}  // namespace tfdiag
