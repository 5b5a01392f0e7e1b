// A RapidJSON writer (`Base`: Writer or PrettyWriter) whose strings and keys always come out as
// valid UTF-8: bytes that are not (a file name, a TF_CONFIG task type, a cgroup name a workload
// chose) become U+FFFD (core/utf8.h ToValidUtf8), so every document tfdiag writes (reports,
// SARIF, bundles) stays JSON (RFC 8259 section 8.1). Valid strings pass through uncopied.
// Thread-safety: as Base (one writer per document).
#pragma once

#include <rapidjson/writer.h>

#include <cstring>
#include <string>
#include <string_view>

#include "core/utf8.h"

namespace tfdiag {

template <typename Base>
class ValidUtf8Writer : public Base {
 public:
  using Base::Base;
  using Ch = typename Base::Ch;
  using SizeType = rapidjson::SizeType;
  bool String(const Ch* s, SizeType n, bool copy = false) {
    if (IsValidUtf8({s, n})) return Base::String(s, n, copy);
    const std::string v = ToValidUtf8({s, n});
    return Base::String(v.data(), static_cast<SizeType>(v.size()), true);
  }
  bool String(const Ch* s) { return String(s, static_cast<SizeType>(std::strlen(s))); }
  bool String(const std::string& s) { return String(s.data(), static_cast<SizeType>(s.size())); }
  bool Key(const Ch* s, SizeType n, bool copy = false) {
    if (IsValidUtf8({s, n})) return Base::Key(s, n, copy);
    const std::string v = ToValidUtf8({s, n});
    return Base::Key(v.data(), static_cast<SizeType>(v.size()), true);
  }
  bool Key(const Ch* s) { return Key(s, static_cast<SizeType>(std::strlen(s))); }
  bool Key(const std::string& s) { return Key(s.data(), static_cast<SizeType>(s.size())); }
};

}  // namespace tfdiag
