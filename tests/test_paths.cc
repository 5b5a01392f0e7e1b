// The paths of the built binaries and of the source tree, fixed at configure time
// (tests/CMakeLists.txt gives them to this file only).
#include "tests/test_util.h"

#ifndef TFDIAG_VIEW_BINARY_PATH
#define TFDIAG_VIEW_BINARY_PATH ""
#endif

namespace tfdiag::test {

const char* BuiltTfdiag() { return TFDIAG_BINARY_PATH; }
const char* BuiltPsload() { return PSLOAD_BINARY_PATH; }
const char* BuiltViewer() { return TFDIAG_VIEW_BINARY_PATH; }
const char* SourceDir() { return TFDIAG_SOURCE_DIR_PATH; }
const char* SharedDir() { return TFDIAG_SHARED_DIR_PATH; }

}  // namespace tfdiag::test
