# Tests of the detect plugin's mathematics (plugins/detect/detect_math.h):
# each compiles the plugin sources it needs directly (the plugin is a dlopen
# MODULE, not linkable) and links libyolo only for yolo_error. Sources are
# named detectmath_*.c so that the tests/test_*.c glob does not take them.
set(DETECTMATH_DIR ${CMAKE_SOURCE_DIR}/plugins/detect)
set(DETECTMATH_TESTS
  "detectmath_boxes:box_ops.c detect_decode.c"
  "detectmath_assigner:box_ops.c tal_assigner.c"
  "detectmath_loss:box_ops.c tal_assigner.c detect_decode.c detect_loss.c"
  "detectmath_nms:box_ops.c nms.c"
  "detectmath_metrics:box_ops.c ap_metrics.c detect_metrics.c")
foreach(entry ${DETECTMATH_TESTS})
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 files)
  string(REPLACE " " ";" files "${files}")
  list(TRANSFORM files PREPEND ${DETECTMATH_DIR}/)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c ${files})
  target_link_libraries(${name} PRIVATE yolo m)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS detect)
endforeach()
