# Interop tests (core/interop: Ultralytics .pt import, ONNX and safetensors
# export) read the reference checkpoints and PyTorch outputs of
# YOLO_INTEROP_DIR and skip with a printed reason when it is absent.
set(YOLO_INTEROP_DIR "${CMAKE_SOURCE_DIR}/../shared/interop" CACHE PATH "Ultralytics reference checkpoints for tests")
foreach(t test_interop_pt test_interop_cli test_interop_onnx test_weights_exact test_host_api)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "YOLO_INTEROP_DIR=${YOLO_INTEROP_DIR}")
  endif()
endforeach()
# test_interop_pt checks YOLO26's end2end selection (yolo_e2e_select) against Ultralytics' postprocess.
if(TARGET test_interop_pt)
  target_link_libraries(test_interop_pt PRIVATE yolo-detection)
endif()
# ONNX Runtime for the export test: the npm package onnxruntime-node, which
# scripts/install-deps.sh installs (npm install --ignore-scripts) here.
set(YOLO_ORT_NODE_DIR "$ENV{HOME}/.cache/yolo/npm" CACHE PATH "folder holding node_modules/onnxruntime-node")
if(TEST test_interop_onnx)
  set_property(TEST test_interop_onnx APPEND PROPERTY ENVIRONMENT "YOLO_ORT_NODE_DIR=${YOLO_ORT_NODE_DIR}")
endif()

# ---- Fuzzing the .pt reader (fuzz/pickle_fuzz.c, corpus fuzz/pickle_corpus).
# pickle_fuzz_driver: a plain program (any compiler; ASan/UBSan under
# -DYOLO_SANITIZE=ON) that replays the corpus and mutates it for a while.
# pickle_fuzz: the libFuzzer target (clang), the interop sources compiled
# into it with coverage instrumentation, run on a copy of the corpus.
set(YOLO_PICKLE_FUZZ_SRC ${CMAKE_SOURCE_DIR}/fuzz/pickle_fuzz.c)
set(YOLO_PICKLE_CORPUS ${CMAKE_SOURCE_DIR}/fuzz/pickle_corpus)
if(EXISTS ${YOLO_PICKLE_FUZZ_SRC})
  add_executable(pickle_fuzz_driver ${YOLO_PICKLE_FUZZ_SRC})
  target_link_libraries(pickle_fuzz_driver PRIVATE PkgConfig::ARCHIVE)
  yolo_link_core(pickle_fuzz_driver)
  set(YOLO_PICKLE_FUZZ_SECONDS 8 CACHE STRING "seconds the ctest fuzz run of the .pt reader lasts")
  add_test(NAME pickle_fuzz_driver COMMAND pickle_fuzz_driver -seconds ${YOLO_PICKLE_FUZZ_SECONDS} ${YOLO_PICKLE_CORPUS})
  set_tests_properties(pickle_fuzz_driver PROPERTIES TIMEOUT 120)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND YOLO_HAVE_LIBFUZZER)
    file(GLOB pickle_fuzz_sources ${CMAKE_SOURCE_DIR}/core/interop/pickle.c ${CMAKE_SOURCE_DIR}/core/interop/pt_import.c
         ${CMAKE_SOURCE_DIR}/core/interop/pt_yaml.c)
    add_executable(pickle_fuzz ${YOLO_PICKLE_FUZZ_SRC} ${pickle_fuzz_sources} ${CMAKE_SOURCE_DIR}/core/util/error.c
                   ${CMAKE_SOURCE_DIR}/core/data/fsutil.c)
    target_compile_definitions(pickle_fuzz PRIVATE YOLO_LIBFUZZER)
    target_include_directories(pickle_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/core ${CMAKE_SOURCE_DIR}/sdk/include)
    target_compile_options(pickle_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -g)
    target_link_options(pickle_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(pickle_fuzz PRIVATE yolo PkgConfig::ARCHIVE Threads::Threads m yolo_build_flags)
    set(pickle_corpus_copy ${CMAKE_CURRENT_BINARY_DIR}/pickle_fuzz_corpus)
    add_test(NAME pickle_fuzz_libfuzzer
      COMMAND sh -c "mkdir -p \"$2\" && cp \"$3\"/* \"$2\"/ && \"$1\" -max_total_time=${YOLO_PICKLE_FUZZ_SECONDS} -rss_limit_mb=2048 \"$2\""
              pickle_fuzz $<TARGET_FILE:pickle_fuzz> ${pickle_corpus_copy} ${YOLO_PICKLE_CORPUS})
    set_tests_properties(pickle_fuzz_libfuzzer PROPERTIES TIMEOUT 120)
  endif()
endif()
