# The `arm64` label: the tests scripts/cross-arm64.sh runs on an aarch64
# build under qemu-user (ctest -L arm64). qemu-user runs code 10-50x slower
# than the host, so the whole suite (trainings, Vulkan, DDP under mpirun,
# ONNX Runtime/Python consumers that are x86 binaries here) is out of reach;
# this subset covers what differs between CPUs: every op's kernels against
# the reference and against central differences (float rounding, OpenBLAS's
# NEON sgemm, the im2col convolutions that are aarch64's default), the graph
# planner (memory plan, in-place and fusion decisions), and core units whose
# code has per-ISA paths or byte-order/alignment assumptions (CRC-32, the
# thread pool's spin loop, bf16 rounding, the loss math, the counter-based
# random streams, yaml and model parsing). Each finishes in seconds natively.
set(YOLO_ARM64_TESTS
  test_ops_reference test_ops_reference_train test_conv_reference test_ops_gradcheck test_ops_coverage
  test_graph
  test_ckpt_crc test_ckpt_tensors test_thread_pool test_bf16_row test_loss_math test_data_rng test_config
  test_model_yaml)
foreach(t ${YOLO_ARM64_TESTS})
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY LABELS arm64)
  endif()
endforeach()
