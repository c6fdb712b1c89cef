# The end-to-end segment training test again with YOLO26-seg (Segment26:
# Proto26's semantic branch, the one-to-one head; yolo26-seg.yaml embedded by
# the segment plugin): test_train_segment takes the model yaml as its argument
# and checks sem_loss falls for it.
if(TARGET test_train_segment)
  add_test(NAME test_train_segment_yolo26 COMMAND test_train_segment yolo26n-seg.yaml)
  set_tests_properties(test_train_segment_yolo26 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
    LABELS "segment;e2e;yolo26"
    ENVIRONMENT "YOLO_DATASETS_DIR=${YOLO_DATASETS_DIR};YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR};YOLO_BINARY_DIR=${CMAKE_BINARY_DIR};YOLO_PLUGIN_PATH=${YOLO_PLUGIN_OUTPUT_DIR}")
endif()
