// Valid UTF-8 for what a workload or a file controls (issue 37 item 8): names from TF_CONFIG,
// cgroup paths, file names and event names reach JSON, SARIF, bundles and Prometheus label
// values, each of which must be valid UTF-8 (RFC 8259 section 8.1; the Prometheus text format
// refuses a whole scrape for one bad label value). Validation follows the Unicode standard's
// table 3-7 (well-formed UTF-8 byte sequences): no overlong forms, no surrogates (U+D800-U+DFFF),
// nothing past U+10FFFF. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tfdiag {

// U+FFFD REPLACEMENT CHARACTER, as UTF-8.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

// Length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 when the bytes there are not one;
// *cp is set to its code point when the result is not 0.
size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* cp);

// True when `s` is well-formed UTF-8 throughout.
bool IsValidUtf8(std::string_view s);

// `s` with each maximal ill-formed subpart replaced by U+FFFD (the W3C/WHATWG decoder's
// "substitution of maximal subparts", so "\xff\xfe" gives two replacements); valid input is
// returned unchanged. *replaced (if given) is incremented by the number of replacements.
std::string ToValidUtf8(std::string_view s, size_t* replaced = nullptr);

// True for the bidirectional formatting controls that reorder how text displays (CVE-2021-42574,
// "Trojan Source"): U+202A-U+202E (LRE, RLE, PDF, LRO, RLO) and U+2066-U+2069 (LRI, RLI, FSI,
// PDI); also U+200E/U+200F (LRM, RLM) and U+061C (ALM).
constexpr bool IsBidiControl(uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E ||
         cp == 0x200F || cp == 0x061C;
}

// `s` made valid UTF-8 (ToValidUtf8) with bidirectional controls written as the six characters
// "\u202e": for messages a person reads (SARIF message text, the text report), where such a
// control would reorder what is shown. *escaped (if given) counts replacements and escapes.
std::string EscapeBidiControls(std::string_view s, size_t* escaped = nullptr);

}  // namespace tfdiag
