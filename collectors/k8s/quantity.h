// Kubernetes resource quantities ("500m", "2", "1.5", "4Gi", "1e3"), parsed as the API server
// does (k8s.io/apimachinery/pkg/api/resource, Quantity; grammar in its quantity.go and at
// https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/):
//   quantity ::= sign? number suffix?        sign ::= "+" | "-"
//   number   ::= digits | digits "." digits? | "." digits
//   suffix   ::= Ki | Mi | Gi | Ti | Pi | Ei            (binary, powers of 1024)
//              | m | k | M | G | T | P | E              (decimal SI; "K" is not one)
//              | ("e" | "E") sign? digits               (decimal exponent)
// Values are rounded up to the unit asked for, as Kubernetes rounds sub-millicore CPU up to 1m.
// Bounds: the result must fit a signed 64-bit integer in that unit (Kubernetes caps quantities at
// 2^63-1) and be >= 0 (the API server rejects negative requests and limits); CPU is further
// bounded by kMaxCpuMillis, the most CPUs a Linux kernel supports (CONFIG_NR_CPUS <= 8192), since a
// container asking for more can never be scheduled and its thread counts would be nonsense.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tfdiag {

// 8192 CPUs in millicores: the largest CONFIG_NR_CPUS of Linux on x86-64 and arm64.
inline constexpr int64_t kMaxCpuMillis = 8192LL * 1000;

// Parses `text` and returns its value times 10^unit_pow10, rounded up (unit_pow10 = 3 for
// millicores, 0 for bytes or counts). On error returns false and sets `*error` to a sentence
// without the field path ("'abc' is not a Kubernetes quantity (e.g. 500m, 2, 4Gi, 1e3)",
// "'-1Gi' is negative", "'9999999999999Ei' exceeds 2^63-1 bytes").
bool ParseQuantity(std::string_view text, int unit_pow10, const char* unit_name, int64_t* value,
                   std::string* error);

// CPU in millicores ("2" -> 2000, "1500m" -> 1500, "0.25" -> 250, "0.1m" -> 1), bounded by
// kMaxCpuMillis; -1 when malformed, negative or out of bounds (`error` says which when given).
int64_t ParseCpuMillis(std::string_view q, std::string* error = nullptr);
// Memory in bytes ("200Mi", "3Gi", "5M", "1e3"); -1 when malformed, negative or past 2^63-1.
int64_t ParseMemoryBytes(std::string_view q, std::string* error = nullptr);

}  // namespace tfdiag
