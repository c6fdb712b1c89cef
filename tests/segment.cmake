# The segment plugin's tests. test_segment_mask compiles the plugin's mask
# mathematics (plugins/segment/segment_mask.c; the plugin is a dlopen
# MODULE, not linkable); test_segment_task loads the plugin through the
# registry; test_train_segment runs the built `yolo` end to end.
target_sources(test_segment_mask PRIVATE ${CMAKE_SOURCE_DIR}/plugins/segment/segment_mask.c)
set_tests_properties(test_segment_mask PROPERTIES TIMEOUT 60 LABELS segment)
add_dependencies(test_segment_task ${YOLO_PLUGIN_TARGETS} yolo_cli)
add_dependencies(test_train_segment ${YOLO_PLUGIN_TARGETS} yolo_cli)
target_link_libraries(test_segment_task PRIVATE yolo-detection)
target_sources(test_segment_task PRIVATE ${CMAKE_SOURCE_DIR}/plugins/segment/segment_mask.c) # its rasterizer
set_tests_properties(test_segment_task PROPERTIES TIMEOUT 60 LABELS segment ENVIRONMENT "YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
set_tests_properties(test_train_segment PROPERTIES TIMEOUT 300 LABELS segment)
