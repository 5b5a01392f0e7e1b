// The floor for `tfdiag analyze`: one RapidJSON SAX pass over a timeline (plain or gzip, through
// the same InputStream and parse flags as tfdiag) with a handler that does nothing with the
// events. Prints the bytes consumed. Usage: sax_floor FILE
#include <rapidjson/reader.h>

#include <cstdio>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sax_floor FILE\n");
    return 2;
  }
  tfdiag::InputStream in;
  tfdiag::Status s = in.Open(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  NullHandler h;
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseTrailingCommasFlag | rapidjson::kParseNanAndInfFlag;
  rapidjson::ParseResult r = reader.Parse<kFlags>(in, h);
  if (r.IsError() && !in.AtEnd()) {
    std::fprintf(stderr, "%s: parse error at byte %zu\n", argv[1], r.Offset());
    return 2;
  }
  std::printf("%zu bytes, %zu values\n", in.Tell(), h.values);
  return 0;
}
