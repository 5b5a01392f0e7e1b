#include "collectors/prometheus/curl_api.h"

#include <dlfcn.h>

#include <string>

namespace tfdiag {

namespace {

constexpr const char* kSoname = "libcurl.so.4";

template <typename F>
bool Resolve(void* lib, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(::dlsym(lib, name));
  if (*out == nullptr && missing->empty()) *missing = name;
  return *out != nullptr;
}

StatusOr<CurlApi> Load() {
  // RTLD_LOCAL: libcurl's symbols stay out of the global namespace; RTLD_NOW: a missing symbol
  // fails here, not in the middle of a query. Never closed: libcurl keeps global state.
  void* lib = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return Internal(
        "--prometheus needs libcurl, which cannot be loaded ({}); install it (Debian: apt-get "
        "install libcurl4)",
        why != nullptr ? why : kSoname);
  }
  CurlApi api{};
  std::string missing;
  Resolve(lib, "curl_global_init", &api.global_init, &missing);
  Resolve(lib, "curl_easy_init", &api.easy_init, &missing);
  Resolve(lib, "curl_easy_cleanup", &api.easy_cleanup, &missing);
  Resolve(lib, "curl_easy_reset", &api.easy_reset, &missing);
  Resolve(lib, "curl_easy_setopt", &api.easy_setopt, &missing);
  Resolve(lib, "curl_easy_perform", &api.easy_perform, &missing);
  Resolve(lib, "curl_easy_getinfo", &api.easy_getinfo, &missing);
  Resolve(lib, "curl_easy_strerror", &api.easy_strerror, &missing);
  Resolve(lib, "curl_easy_escape", &api.easy_escape, &missing);
  Resolve(lib, "curl_free", &api.free, &missing);
  Resolve(lib, "curl_slist_append", &api.slist_append, &missing);
  Resolve(lib, "curl_slist_free_all", &api.slist_free_all, &missing);
  if (!missing.empty())
    return Internal("{}: symbol {} not found: libcurl too old?", kSoname, missing);
  const CURLcode rc = api.global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) return Internal("curl_global_init: {}", api.easy_strerror(rc));
  return api;
}

}  // namespace

StatusOr<const CurlApi*> LoadCurl() {
  static const StatusOr<CurlApi> api = Load();
  if (!api.ok()) return api.status();
  return &*api;
}

}  // namespace tfdiag
