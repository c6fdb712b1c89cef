# The end-to-end training tests again with YOLO11 models (Ultralytics'
# yolo11*.yaml embedded by the plugins): test_train_<task> takes the model
# yaml as its argument.
foreach(pair "detect;yolo11n.yaml;300" "segment;yolo11n-seg.yaml;300" "classify;yolo11n-cls.yaml;300")
  list(GET pair 0 task)
  list(GET pair 1 model)
  list(GET pair 2 timeout)
  if(TARGET test_train_${task})
    add_test(NAME test_train_${task}_yolo11 COMMAND test_train_${task} ${model})
    set_tests_properties(test_train_${task}_yolo11 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${timeout}
      LABELS "${task};e2e;yolo11"
      ENVIRONMENT "YOLO_DATASETS_DIR=${YOLO_DATASETS_DIR};YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR};YOLO_BINARY_DIR=${CMAKE_BINARY_DIR};YOLO_PLUGIN_PATH=${YOLO_PLUGIN_OUTPUT_DIR}")
  endif()
endforeach()
