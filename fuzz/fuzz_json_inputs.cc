// libFuzzer target: the JSON entry points a workload or a user controls, with no file around
// them (issue 37): TF_CONFIG (collectors/discovery/tf_config.h, what attach and the agent read
// from every process), a rules file (rules/rule_set.h, --rules), a Prometheus API reply
// (collectors/prometheus/prom_reply.h) and the depth-limited DOM parse (core/json_dom.h), plus
// the UTF-8 repair every output uses (core/utf8.h). The first byte picks the entry point; the
// rest is the text. Every input ends in OK or kInvalidInput, never a crash, a stack overflow
// (seeds of 100,000 '[' and '{"a":'), a hang or unbounded memory; ToValidUtf8 always returns
// valid UTF-8 and leaves valid text as it is.
//
// Build: make fuzz. Run: ./fuzz_json_inputs -max_len=1048576 <corpus copy>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "collectors/discovery/tf_config.h"
#include "collectors/prometheus/prom_reply.h"
#include "core/json_dom.h"
#include "core/utf8.h"
#include "rules/rule_set.h"

namespace {

void ExpectInvalidInputOrOk(const tfdiag::Status& s) {
  if (!s.ok() && s.code() != tfdiag::StatusCode::kInvalidInput) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      auto c = tfdiag::ParseTfConfig(text);
      ExpectInvalidInputOrOk(c.status());
      break;
    }
    case 1: {
      auto r = tfdiag::ParseRuleSet(text, "fuzz.rules.json");
      ExpectInvalidInputOrOk(r.status());
      break;
    }
    case 2: {
      std::string copy = text;  // parsed in place, NUL-terminated
      auto r = tfdiag::ParsePromReply(copy.data(), copy.size(), "fuzz", 10000);
      ExpectInvalidInputOrOk(r.status());
      break;
    }
    case 3: {
      tfdiag::JsonDocument d;
      std::string copy = text;
      ExpectInvalidInputOrOk(tfdiag::ParseJsonDom("fuzz.json", copy.data(), copy.size(), &d));
      break;
    }
    default: {
      size_t replaced = 0;
      const std::string v = tfdiag::ToValidUtf8(text, &replaced);
      if (!tfdiag::IsValidUtf8(v)) std::abort();
      if (tfdiag::IsValidUtf8(text) != (replaced == 0) || (replaced == 0 && v != text)) {
        std::abort();
      }
      if (!tfdiag::IsValidUtf8(tfdiag::EscapeBidiControls(text))) std::abort();
      break;
    }
  }
  return 0;
}
