// The floor for `tfdiag analyze`: one single-threaded RapidJSON SAX pass (Reader::Parse) with a
// handler that does nothing with the events, over each file given, one after another (the time of
// several files is the sum of their passes). Plain files are mapped and parsed in place through a
// StringStream, so RapidJSON's SSE4.2 whitespace and string scans apply (CMakeLists.txt builds
// this with -O3 -march=native -DRAPIDJSON_SSE42); gzip files go through tfdiag's InputStream (zlib,
// one thread). Parse flags as tfdiag's: numbers as strings, trailing commas, NaN/Inf.
// Prints the bytes and values seen. Usage: sax_floor FILE...
#include <rapidjson/reader.h>

#include <cstdio>

#include "bench/padded_map.h"
#include "collectors/timeline/input_stream.h"

namespace {

struct NullHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, NullHandler> {
  size_t values = 0;
  bool Default() {
    ++values;
    return true;
  }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return Default(); }
};

constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                            rapidjson::kParseTrailingCommasFlag | rapidjson::kParseNanAndInfFlag;

// One file; false (message printed) on an error.
bool ParseOne(const char* path, NullHandler* h, size_t* bytes) {
  rapidjson::Reader reader;
  bench::PaddedMap map;
  if (!map.Map(path, 64)) {
    std::perror(path);
    return false;
  }
  const bool gzip = map.size() >= 2 && static_cast<unsigned char>(map.data()[0]) == 0x1f &&
                    static_cast<unsigned char>(map.data()[1]) == 0x8b;
  if (!gzip) {
    rapidjson::StringStream in(map.data());
    rapidjson::ParseResult r = reader.Parse<kFlags>(in, *h);
    if (r.IsError() && r.Offset() < map.size()) {
      std::fprintf(stderr, "%s: parse error at byte %zu\n", path, r.Offset());
      return false;
    }
    *bytes += map.size();
    return true;
  }
  tfdiag::InputStream in;
  tfdiag::Status s = in.Open(path);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return false;
  }
  rapidjson::ParseResult r = reader.Parse<kFlags>(in, *h);
  if (r.IsError() && !in.AtEnd()) {
    std::fprintf(stderr, "%s: parse error at byte %zu\n", path, r.Offset());
    return false;
  }
  *bytes += in.Tell();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sax_floor FILE...\n");
    return 2;
  }
  NullHandler h;
  size_t bytes = 0;
  for (int i = 1; i < argc; ++i) {
    if (!ParseOne(argv[i], &h, &bytes)) return 2;
  }
  std::printf("%zu bytes, %zu values\n", bytes, h.values);
  return 0;
}
