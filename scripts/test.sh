#!/bin/sh
# Installs dependencies, builds with -Werror and the test hooks, runs the test suite.
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --sanitize  ASan+UBSan build in build-asan/ (leaks fail)
#   scripts/test.sh --isa LEVEL Release build in build/, then a subset under
#                               YOLO_CPU_ISA=LEVEL (avx2, avx512, avx512_bf16,
#                               default): an AVX-512 machine tests the AVX2 path
#
# The --isa subset (about 10 minutes on 2 cores) is what the ISA changes:
#   test_cpu_isa               the cap itself, the clones' dispatch and bits
#   test_ops_reference, test_ops_reference_train, test_conv_reference
#                              every op against its reference on the capped
#                              kernels (oneDNN's AVX2 convolutions block by 8)
#   test_ops_gradcheck         gradients against central differences
#   test_graph                 the planner (layouts, memory) on that ISA
#   test_blocked_activations, test_conv_weight_parts
#                              the channel-blocked layouts and oneDNN's weight
#                              parts, which follow the ISA's block
#   test_bf16_row              bf16 rounding without the CPU's VCVTNEPS2BF16
#   test_loss_math, detectmath_loss
#                              the vector BCE and the detection loss on the
#                              capped build of util/vec.h
#   test_train_detect, test_train_segment, test_train_classify
#                              one end-to-end training per task (the YOLOv8
#                              models; the other families' runs add nothing
#                              ISA-specific and would double the time)
# OPENBLAS_CORETYPE is exported too: the tests do not re-execute themselves
# as the yolo CLI does (util/cpu_isa.h), and OpenBLAS reads it when it loads.
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
if [ "${1:-}" = "--isa" ]; then
  isa="${2:?usage: scripts/test.sh --isa avx2|avx512|avx512_bf16|default}"
  case "$isa" in
    avx2 | avx512 | avx512_bf16 | default) ;;
    *) echo "scripts/test.sh: --isa $isa: the accepted values are avx2, avx512, avx512_bf16, default" >&2; exit 2 ;;
  esac
  export YOLO_CPU_ISA="$isa"
  # `yolo checks` reports the OpenBLAS core it re-executed with: the cap's,
  # or the machine's when the cap is not below it (forcing a higher core
  # than the CPU has would fault)
  line=$("$dir/bin/yolo" checks | sed -n 's/^\(CPU: .*\)$/\1/p')
  echo "$line"
  blas=$(echo "$line" | sed -n 's/.*; OpenBLAS \([A-Za-z0-9]*\);.*/\1/p')
  if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -n "$blas" ]; then export OPENBLAS_CORETYPE="$blas"; fi
  ctest --test-dir "$dir" --output-on-failure -j2 -R '^(test_cpu_isa|test_ops_reference|test_ops_reference_train|test_conv_reference|test_ops_gradcheck|test_graph|test_blocked_activations|test_conv_weight_parts|test_bf16_row|test_loss_math|detectmath_loss|test_train_detect|test_train_segment|test_train_classify)$'
  exit
fi
ctest --test-dir "$dir" --output-on-failure -j2
