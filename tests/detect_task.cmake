# test_detect_task loads the detect plugin through the registry (so the
# plugins are built first) and checks its loss against the plugin's
# mathematics, compiled in here as the detectmath_* tests do.
if(TARGET test_detect_task)
  target_sources(test_detect_task PRIVATE ${CMAKE_SOURCE_DIR}/plugins/detect/box_ops.c
    ${CMAKE_SOURCE_DIR}/plugins/detect/tal_assigner.c ${CMAKE_SOURCE_DIR}/plugins/detect/detect_decode.c
    ${CMAKE_SOURCE_DIR}/plugins/detect/detect_loss.c)
  if(YOLO_PLUGIN_TARGETS)
    add_dependencies(test_detect_task ${YOLO_PLUGIN_TARGETS})
  endif()
  set_tests_properties(test_detect_task PROPERTIES TIMEOUT 60 LABELS detect)
endif()
