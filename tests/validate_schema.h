// JSON Schema validation of what tfdiag writes, by Debian's python3-jsonschema through
// tests/validate_json.py (never by the code that writes the documents): the published schemas
// in docs/schemas and GitHub's SARIF upload rules in tests/schemas.
#pragma once

#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {

// "" when /usr/bin/python3 has the jsonschema module, else why not (for GTEST_SKIP).
inline std::string SkipWithoutValidator() {
  if (RunShell("/usr/bin/python3 -c 'import jsonschema'").exit_code != 0)
    return "no python3-jsonschema for /usr/bin/python3 (scripts/bootstrap.sh installs it)";
  return "";
}

// Validates each of `docs` (paths) against `schema` (a path; sibling *.schema.json files resolve
// "$ref"s). "" when every document is valid, else the validator's report (document, JSON path,
// message per violation).
inline std::string Validate(const std::string& schema, const std::vector<std::string>& docs) {
  std::string cmd = "/usr/bin/python3 '" + std::string(TFDIAG_SOURCE_DIR) +
                    "/tests/validate_json.py' '" + schema + "'";
  for (const std::string& d : docs) cmd += " '" + d + "'";
  RunResult r = RunShell(cmd);
  return r.exit_code == 0 ? "" : r.out + r.err;
}

}  // namespace tfdiag::test
