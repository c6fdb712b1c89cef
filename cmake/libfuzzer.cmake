# Whether clang can build libFuzzer targets (tests/ckpt.cmake, tests/fuzz.cmake).
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT DEFINED YOLO_HAVE_LIBFUZZER)
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  check_c_source_compiles("#include <stddef.h>
    #include <stdint.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }" YOLO_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
endif()
