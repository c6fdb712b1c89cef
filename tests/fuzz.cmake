# Fuzz targets of the input readers (fuzz/<target>_fuzz.c), the same two
# ways as the checkpoint one (tests/ckpt.cmake):
#   <target>_fuzz_driver  a plain program for any compiler (CI: gcc, and
#                         ASan+UBSan under -DYOLO_SANITIZE=ON) that replays
#                         fuzz/corpus/<target>/ and mutates it for
#                         YOLO_FUZZ_SECONDS (fuzz/fuzz_driver.c);
#   <target>_fuzz         the libFuzzer target (clang only): the sources it
#                         reads compiled into it with coverage instrumentation,
#                         outside libyolo (core/data/, core/util/error.c,
#                         grow_buf.c and text_file.c need nothing else; the
#                         model yaml parser neither).
# A long run by hand, e.g. with clang:
#   build/bin/image_fuzz -max_total_time=600 -rss_limit_mb=2048 /tmp/corpus fuzz/corpus/image
set(YOLO_FUZZ_SECONDS 5 CACHE STRING "seconds each ctest fuzz run of an input reader lasts")
set(YOLO_FUZZ_TARGETS labels label_cache data_yaml model_yaml image pt)
file(GLOB yolo_fuzz_data_sources ${CMAKE_SOURCE_DIR}/core/data/*.c)
set(labels_fuzz_sources ${yolo_fuzz_data_sources})
set(label_cache_fuzz_sources ${yolo_fuzz_data_sources})
set(data_yaml_fuzz_sources ${yolo_fuzz_data_sources})
set(image_fuzz_sources ${yolo_fuzz_data_sources})
set(model_yaml_fuzz_sources ${CMAKE_SOURCE_DIR}/core/nn/model_yaml.c ${CMAKE_SOURCE_DIR}/core/nn/model_size.c)
# the .pt reader (pt_fuzz.c): its interop sources instrumented, the rest (f16, files) from libyolo
set(pt_fuzz_sources ${CMAKE_SOURCE_DIR}/core/interop/pickle.c ${CMAKE_SOURCE_DIR}/core/interop/pt_import.c
    ${CMAKE_SOURCE_DIR}/core/interop/pt_yaml.c ${CMAKE_SOURCE_DIR}/core/interop/strbuf.c ${CMAKE_SOURCE_DIR}/core/data/fsutil.c)
# Targets that promise bounded memory run under a cap (MiB; fuzz/fuzz_driver.c's -mem-mb, ASan's
# max_allocation_size_mb, libFuzzer's -malloc_limit_mb): an allocation past it fails and the target
# calls the out-of-memory a finding. The others keep libFuzzer's 2048 MB RSS limit alone.
set(pt_fuzz_mem_mb 512)
set(model_yaml_fuzz_mem_mb 512)

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
  set(mem_args "")
  if(DEFINED ${target}_fuzz_mem_mb)
    set(mem_args -mem-mb ${${target}_fuzz_mem_mb})
  endif()
  add_test(NAME ${target}_fuzz_driver COMMAND ${target}_fuzz_driver -seconds ${YOLO_FUZZ_SECONDS} ${mem_args} ${corpus})
  set_tests_properties(${target}_fuzz_driver PROPERTIES TIMEOUT 120)
  if(DEFINED ${target}_fuzz_mem_mb)
    set_tests_properties(${target}_fuzz_driver PROPERTIES ENVIRONMENT
      "ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=${${target}_fuzz_mem_mb}")
  endif()

  if(YOLO_HAVE_LIBFUZZER)
    add_executable(${target}_fuzz ${src} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_check.c ${${target}_fuzz_sources}
                   ${CMAKE_SOURCE_DIR}/core/util/error.c ${CMAKE_SOURCE_DIR}/core/util/grow_buf.c
                   ${CMAKE_SOURCE_DIR}/core/util/text_file.c)
    target_compile_definitions(${target}_fuzz PRIVATE YOLO_LIBFUZZER YOLO_VERSION="${PROJECT_VERSION}")
    target_include_directories(${target}_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/core ${CMAKE_SOURCE_DIR}/sdk/include)
    target_compile_options(${target}_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -g)
    target_link_options(${target}_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${target}_fuzz PRIVATE PkgConfig::YAML PkgConfig::ARCHIVE PkgConfig::PNG PkgConfig::TURBOJPEG PkgConfig::WEBP PkgConfig::TIFF
                          Threads::Threads m yolo_build_flags)
    # libFuzzer adds what it finds to its first folder: a copy of the corpus.
    set(work ${CMAKE_CURRENT_BINARY_DIR}/${target}_fuzz_corpus)
    if(target STREQUAL "pt")
      target_link_libraries(pt_fuzz PRIVATE yolo)
    endif()
    set(malloc_limit "")
    if(DEFINED ${target}_fuzz_mem_mb)
      set(malloc_limit "-malloc_limit_mb=${${target}_fuzz_mem_mb}")
    endif()
    add_test(NAME ${target}_fuzz_libfuzzer
      COMMAND sh -c "mkdir -p \"$3\" && cp \"$2\"/* \"$3\"/ && \"$1\" -max_total_time=${YOLO_FUZZ_SECONDS} -rss_limit_mb=2048 ${malloc_limit} \"$3\""
              ${target}_fuzz $<TARGET_FILE:${target}_fuzz> ${corpus} ${work})
    set_tests_properties(${target}_fuzz_libfuzzer PROPERTIES TIMEOUT 120)
  endif()
endforeach()
