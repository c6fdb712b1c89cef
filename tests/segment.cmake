# The segment plugin's tests. test_segment_mask compiles the plugin's mask
# mathematics (plugins/segment/segment_mask.c; the plugin is a dlopen
# MODULE, not linkable); test_segment_task loads the plugin through the
# registry; test_train_segment runs the built `yolo` end to end.
if(TARGET test_segment_mask)
  target_sources(test_segment_mask PRIVATE ${CMAKE_SOURCE_DIR}/plugins/segment/segment_mask.c)
  set_tests_properties(test_segment_mask PROPERTIES TIMEOUT 60 LABELS segment)
endif()
foreach(test test_segment_task test_train_segment)
  if(TARGET ${test})
    if(YOLO_PLUGIN_TARGETS)
      add_dependencies(${test} ${YOLO_PLUGIN_TARGETS})
    endif()
    if(TARGET yolo_cli)
      add_dependencies(${test} yolo_cli)
    endif()
  endif()
endforeach()
if(TARGET test_segment_task)
  set_tests_properties(test_segment_task PROPERTIES TIMEOUT 60 LABELS segment)
endif()
if(TARGET test_train_segment)
  set_tests_properties(test_train_segment PROPERTIES TIMEOUT 300 LABELS segment)
endif()
