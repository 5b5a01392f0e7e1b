// The physical limit beside the floor (bench/README.md): simdjson On-Demand over each plain file
// given, one after another, visiting every value: object keys and strings unescaped, numbers
// parsed (as double), every array element and member. The file is mapped with simdjson's padding
// behind it (bench/padded_map.h), so it is read in place. Prints the bytes and values seen.
// simdjson: https://simdjson.github.io/simdjson/ (On-Demand front end; Debian's libsimdjson-dev).
// Usage: simdjson_floor FILE...
#include <simdjson.h>

#include <cstdio>

#include "bench/padded_map.h"

namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::value;

// Visits `v` and everything inside it; adds the values to *n. False on a parse error.
bool Visit(value v, size_t* n, size_t depth) {
  ++*n;
  json_type t;
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  switch (t) {
    case json_type::object: {
      simdjson::ondemand::object o;
      if (v.get_object().get(o) != simdjson::SUCCESS) return false;
      for (auto field : o) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) return false;
        value inner;
        if (field.value().get(inner) != simdjson::SUCCESS) return false;
        if (!Visit(inner, n, depth + 1)) return false;
      }
      return true;
    }
    case json_type::array: {
      simdjson::ondemand::array a;
      if (v.get_array().get(a) != simdjson::SUCCESS) return false;
      for (auto element : a) {
        value inner;
        if (element.get(inner) != simdjson::SUCCESS) return false;
        if (!Visit(inner, n, depth + 1)) return false;
      }
      return true;
    }
    case json_type::number: {
      double d;
      return v.get_double().get(d) == simdjson::SUCCESS;
    }
    case json_type::string: {
      std::string_view s;
      return v.get_string().get(s) == simdjson::SUCCESS;
    }
    case json_type::boolean: {
      bool b;
      return v.get_bool().get(b) == simdjson::SUCCESS;
    }
    case json_type::null:
      return v.is_null();
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: simdjson_floor FILE...\n");
    return 2;
  }
  simdjson::ondemand::parser parser;
  size_t bytes = 0, values = 0;
  for (int i = 1; i < argc; ++i) {
    bench::PaddedMap map;
    if (!map.Map(argv[i], simdjson::SIMDJSON_PADDING)) {
      std::perror(argv[i]);
      return 2;
    }
    simdjson::padded_string_view json(map.data(), map.size(), map.capacity());
    simdjson::ondemand::document doc;
    if (parser.iterate(json).get(doc) != simdjson::SUCCESS) {
      std::fprintf(stderr, "%s: simdjson could not start\n", argv[i]);
      return 2;
    }
    value root;
    if (doc.get_value().get(root) != simdjson::SUCCESS || !Visit(root, &values, 0)) {
      std::fprintf(stderr, "%s: simdjson parse error\n", argv[i]);
      return 2;
    }
    bytes += map.size();
  }
  std::printf("%zu bytes, %zu values\n", bytes, values);
  return 0;
}
