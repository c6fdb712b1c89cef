# The end-to-end training tests again with YOLO12 models (Ultralytics'
# yolo12*.yaml embedded by the plugins: A2C2f's area attention at 128 px
# for detect and segment, 32 px for classify): test_train_<task> takes the
# model yaml as its argument.
foreach(pair "detect;yolo12n.yaml;300" "segment;yolo12n-seg.yaml;300" "classify;yolo12n-cls.yaml;300")
  list(GET pair 0 task)
  list(GET pair 1 model)
  list(GET pair 2 timeout)
  if(TARGET test_train_${task})
    add_test(NAME test_train_${task}_yolo12 COMMAND test_train_${task} ${model})
    set_tests_properties(test_train_${task}_yolo12 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${timeout}
      LABELS "${task};e2e;yolo12"
      ENVIRONMENT "YOLO_DATASETS_DIR=${YOLO_DATASETS_DIR};YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR};YOLO_BINARY_DIR=${CMAKE_BINARY_DIR};YOLO_PLUGIN_PATH=${YOLO_PLUGIN_OUTPUT_DIR}")
  endif()
endforeach()
