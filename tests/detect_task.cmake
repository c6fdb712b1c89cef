# test_detect_task loads the detect plugin through the registry (so the
# plugins are built first) and checks its loss against the detection
# toolkit (yolo/detection.h) in libyolo-detection.
if(TARGET test_detect_task)
  target_link_libraries(test_detect_task PRIVATE yolo-detection)
  if(YOLO_PLUGIN_TARGETS)
    add_dependencies(test_detect_task ${YOLO_PLUGIN_TARGETS})
  endif()
  set_tests_properties(test_detect_task PROPERTIES TIMEOUT 60 LABELS detect)
endif()
