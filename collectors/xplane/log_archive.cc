#include "collectors/xplane/log_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/escape.h"

namespace tfdiag {

namespace {

// Why `name` is no safe relative path below the directory, or "".
std::string BadPath(std::string_view name) {
  if (name.empty()) return "an empty name";
  if (name.front() == '/') return "an absolute path";
  for (unsigned char ch : name) {
    if (ch < 0x20 || ch == 0x7f) return "a control character in its name";
  }
  size_t i = 0;
  while (i <= name.size()) {
    const size_t j = std::min(name.find('/', i), name.size());
    if (name.substr(i, j - i) == "..") return "a '..' component";
    i = j + 1;
  }
  return "";
}

class ArchiveReader {
 public:
  ArchiveReader() : a_(archive_read_new()) {}
  ~ArchiveReader() {
    if (a_ != nullptr) archive_read_free(a_);
  }
  archive* get() { return a_; }

 private:
  archive* a_;
};

// Writes the current entry's data to `fd`, counting bytes against the limits.
Status CopyData(archive* a, int fd, const std::string& what, int64_t* entry_bytes, int64_t* total) {
  std::vector<char> buf(1 << 16);
  while (true) {
    const la_ssize_t n = archive_read_data(a, buf.data(), buf.size());
    if (n == 0) return OkStatus();
    if (n < 0) return InvalidInput("{}: {}", what, archive_error_string(a));
    *entry_bytes += n;
    *total += n;
    if (*entry_bytes > UnpackedArchive::kMaxEntryBytes) {
      return InvalidInput("{}: larger than {} bytes", what, UnpackedArchive::kMaxEntryBytes);
    }
    if (*total > UnpackedArchive::kMaxTotalBytes) {
      return InvalidInput("{}: the archive unpacks to more than {} bytes", what,
                          UnpackedArchive::kMaxTotalBytes);
    }
    for (la_ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(fd, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0)
        return IoError("{}: cannot write the unpacked file: {}", what, std::strerror(errno));
      done += w;
    }
  }
}

}  // namespace

bool IsTarArchive(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files as they are
  if (f == nullptr) return false;
  char buf[512];
  const int n = gzread(f, buf, sizeof buf);
  gzclose(f);
  return n >= 262 && std::memcmp(buf + 257, "ustar", 5) == 0;
}

StatusOr<std::unique_ptr<UnpackedArchive>> UnpackedArchive::Unpack(const std::string& path) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tfdiag-archive-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    return IoError("{}: cannot make a temporary directory to unpack it: {}", path,
                   std::strerror(errno));
  }
  std::unique_ptr<UnpackedArchive> out(new UnpackedArchive());
  out->dir_ = templ;  // removed by the destructor, also on every error below
  ArchiveReader r;
  archive* a = r.get();
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_none(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  if (archive_read_open_filename(a, path.c_str(), 1 << 16) != ARCHIVE_OK) {
    return IoError("{}: cannot read it as a tar archive: {}", path, archive_error_string(a));
  }
  archive_entry* e = nullptr;
  while (true) {
    const int rc = archive_read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      return InvalidInput("{}: entry {}: {}", path, out->entries_ + 1, archive_error_string(a));
    }
    ++out->entries_;
    const char* raw = archive_entry_pathname(e);
    std::string name = raw != nullptr ? raw : "";
    const std::string what =
        fmt::format("{}: entry {} ({})", path, out->entries_, Printable(name.substr(0, 200)));
    if (out->entries_ > kMaxEntries) {
      return InvalidInput("{}: more than {} entries", path, kMaxEntries);
    }
    while (name.size() > 2 && name.compare(0, 2, "./") == 0) name.erase(0, 2);
    while (!name.empty() && name.back() == '/') name.pop_back();
    if (name.empty() || name == ".") continue;  // the archive's own top directory
    if (const std::string bad = BadPath(name); !bad.empty()) {
      return InvalidInput("{}: {}, refused", what, bad);
    }
    const mode_t type = archive_entry_filetype(e);
    if (archive_entry_hardlink(e) != nullptr || archive_entry_symlink(e) != nullptr ||
        (type != AE_IFREG && type != AE_IFDIR)) {
      return InvalidInput(
          "{}: a link, device, FIFO or socket, refused (only files and "
          "directories are unpacked)",
          what);
    }
    const std::filesystem::path target = std::filesystem::path(out->dir_) / name;
    std::error_code ec;
    if (type == AE_IFDIR) {
      std::filesystem::create_directories(target, ec);
      if (ec) return IoError("{}: cannot make the directory: {}", what, ec.message());
      continue;
    }
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) return IoError("{}: cannot make its directory: {}", what, ec.message());
    const int fd =
        ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      return errno == EEXIST ? InvalidInput("{}: the archive holds this name twice", what)
                             : IoError("{}: cannot write it: {}", what, std::strerror(errno));
    }
    int64_t entry_bytes = 0;
    Status st = CopyData(a, fd, what, &entry_bytes, &out->bytes_);
    if (::close(fd) != 0 && st.ok()) st = IoError("{}: cannot write it", what);
    if (!st.ok()) return st;
  }
  return out;
}

UnpackedArchive::~UnpackedArchive() {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);  // our own files only: links were never made
}

}  // namespace tfdiag
