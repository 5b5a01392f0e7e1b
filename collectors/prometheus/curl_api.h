// libcurl, loaded the first time a Prometheus server is queried instead of at process start.
//
// Linked directly, libcurl brings about 25 shared libraries (TLS, Kerberos, LDAP, IDN, HTTP/2,
// ...) into every tfdiag process: about 5 MB of resident pages and their relocations in `attach`
// on every node and in every `analyze` of a file, which never talk HTTP. Loaded with dlopen only
// by `--prometheus`, they cost nothing elsewhere. The functions and their signatures are libcurl's
// public API (curl/curl.h, https://curl.se/libcurl/c/allfuncs.html); soname libcurl.so.4
// (Debian package libcurl4).
#pragma once

#include <curl/curl.h>

#include "core/status.h"

namespace tfdiag {

// The libcurl functions the Prometheus client calls, resolved from libcurl.so.4.
struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL* h);
  void (*easy_reset)(CURL* h);
  CURLcode (*easy_setopt)(CURL* h, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* h);
  CURLcode (*easy_getinfo)(CURL* h, CURLINFO info, ...);
  const char* (*easy_strerror)(CURLcode rc);
  char* (*easy_escape)(CURL* h, const char* s, int length);
  void (*free)(void* p);
  struct curl_slist* (*slist_append)(struct curl_slist* list, const char* s);
  void (*slist_free_all)(struct curl_slist* list);
};

// Loads libcurl.so.4 (once; later calls return the same table) and runs curl_global_init.
// Errors: kInternal naming the library, dlerror()'s text and the Debian package to install,
// or the failed symbol. Thread-safe (a function-local static).
StatusOr<const CurlApi*> LoadCurl();

}  // namespace tfdiag
