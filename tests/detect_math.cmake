# Tests of the detection toolkit (sdk/include/yolo/detection.h,
# detection/*.c): each links libyolo-detection (and through it libyolo)
# only, as a third-party task plugin would. Sources are named detectmath_*.c so that the tests/test_*.c glob
# does not take them.
set(DETECTMATH_TESTS detectmath_boxes detectmath_assigner detectmath_loss detectmath_nms detectmath_metrics)
foreach(name ${DETECTMATH_TESTS})
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE yolo-detection yolo yolo_build_flags m)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS detect)
endforeach()
