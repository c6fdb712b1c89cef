# test_detect_task loads the detect plugin through the registry (so the
# plugins are built first) and checks its loss against the detection
# toolkit (yolo/detection.h) in libyolo-detection.
target_link_libraries(test_detect_task PRIVATE yolo-detection)
add_dependencies(test_detect_task ${YOLO_PLUGIN_TARGETS})
set_tests_properties(test_detect_task PROPERTIES TIMEOUT 60 LABELS detect ENVIRONMENT "YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
