# The end-to-end detect training test again with YOLOv9t (Ultralytics'
# yolov9t.yaml embedded by the detect plugin: GELAN modules, RepConv,
# AConv's average pool): test_train_detect takes the model yaml as its
# argument.
if(TARGET test_train_detect)
  add_test(NAME test_train_detect_yolov9 COMMAND test_train_detect yolov9t.yaml)
  set_tests_properties(test_train_detect_yolov9 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
    LABELS "detect;e2e;yolov9"
    ENVIRONMENT "YOLO_DATASETS_DIR=${YOLO_DATASETS_DIR};YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR};YOLO_BINARY_DIR=${CMAKE_BINARY_DIR};YOLO_PLUGIN_PATH=${YOLO_PLUGIN_OUTPUT_DIR}")
endif()
