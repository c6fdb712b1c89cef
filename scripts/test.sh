#!/bin/sh
# Installs dependencies, builds with -Werror and the test hooks, runs the test suite.
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --sanitize  ASan+UBSan build in build-asan/ (leaks fail)
set -eu
cd "$(dirname "$0")/.."

scripts/install-deps.sh

if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DYOLO_SANITIZE=ON -DYOLO_WERROR=ON -DYOLO_TEST_HOOKS=ON
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$(pwd)/tests/third_party_lsan.supp:print_suppressions=0"
  export YOLO_SANITIZED=1
else
  dir=build
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DYOLO_WERROR=ON -DYOLO_TEST_HOOKS=ON
fi
cmake --build "$dir" -j2
ctest --test-dir "$dir" --output-on-failure -j2
