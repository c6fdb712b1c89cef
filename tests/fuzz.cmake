# Fuzz targets of the input readers (fuzz/<target>_fuzz.c), the same two
# ways as the checkpoint one (tests/ckpt.cmake):
#   <target>_fuzz_driver  a plain program for any compiler (CI: gcc, and
#                         ASan+UBSan under -DYOLO_SANITIZE=ON) that replays
#                         fuzz/corpus/<target>/ and mutates it for
#                         YOLO_FUZZ_SECONDS (fuzz/fuzz_driver.c);
#   <target>_fuzz         the libFuzzer target (clang only): the sources it
#                         reads compiled into it with coverage instrumentation,
#                         outside libyolo (core/data/, core/util/error.c and grow_buf.c
#                         need nothing else; the model yaml parser neither).
# A long run by hand, e.g. with clang:
#   build/bin/image_fuzz -max_total_time=600 -rss_limit_mb=2048 /tmp/corpus fuzz/corpus/image
set(YOLO_FUZZ_SECONDS 5 CACHE STRING "seconds each ctest fuzz run of an input reader lasts")
set(YOLO_FUZZ_TARGETS labels label_cache data_yaml model_yaml image)
file(GLOB yolo_fuzz_data_sources ${CMAKE_SOURCE_DIR}/core/data/*.c)
set(labels_fuzz_sources ${yolo_fuzz_data_sources})
set(label_cache_fuzz_sources ${yolo_fuzz_data_sources})
set(data_yaml_fuzz_sources ${yolo_fuzz_data_sources})
set(image_fuzz_sources ${yolo_fuzz_data_sources})
set(model_yaml_fuzz_sources ${CMAKE_SOURCE_DIR}/core/nn/model_yaml.c)

include(${CMAKE_SOURCE_DIR}/cmake/libfuzzer.cmake)

foreach(target ${YOLO_FUZZ_TARGETS})
  set(src ${CMAKE_SOURCE_DIR}/fuzz/${target}_fuzz.c)
  set(corpus ${CMAKE_SOURCE_DIR}/fuzz/corpus/${target})
  if(NOT EXISTS ${src})
    continue()
  endif()
  add_executable(${target}_fuzz_driver ${src} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_driver.c
                 ${CMAKE_SOURCE_DIR}/fuzz/fuzz_mutate.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_check.c)
  yolo_link_core(${target}_fuzz_driver)
  add_test(NAME ${target}_fuzz_driver COMMAND ${target}_fuzz_driver -seconds ${YOLO_FUZZ_SECONDS} ${corpus})
  set_tests_properties(${target}_fuzz_driver PROPERTIES TIMEOUT 120)

  if(YOLO_HAVE_LIBFUZZER)
    add_executable(${target}_fuzz ${src} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_check.c ${${target}_fuzz_sources}
                   ${CMAKE_SOURCE_DIR}/core/util/error.c ${CMAKE_SOURCE_DIR}/core/util/grow_buf.c)
    target_compile_definitions(${target}_fuzz PRIVATE YOLO_LIBFUZZER YOLO_VERSION="${PROJECT_VERSION}")
    target_include_directories(${target}_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/core ${CMAKE_SOURCE_DIR}/sdk/include)
    target_compile_options(${target}_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -g)
    target_link_options(${target}_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${target}_fuzz PRIVATE PkgConfig::YAML PkgConfig::ARCHIVE PkgConfig::PNG PkgConfig::TURBOJPEG PkgConfig::WEBP PkgConfig::TIFF
                          Threads::Threads m yolo_build_flags)
    # libFuzzer adds what it finds to its first folder: a copy of the corpus.
    set(work ${CMAKE_CURRENT_BINARY_DIR}/${target}_fuzz_corpus)
    add_test(NAME ${target}_fuzz_libfuzzer
      COMMAND sh -c "mkdir -p \"$3\" && cp \"$2\"/* \"$3\"/ && \"$1\" -max_total_time=${YOLO_FUZZ_SECONDS} -rss_limit_mb=2048 \"$3\""
              ${target}_fuzz $<TARGET_FILE:${target}_fuzz> ${corpus} ${work})
    set_tests_properties(${target}_fuzz_libfuzzer PROPERTIES TIMEOUT 120)
  endif()
endforeach()
