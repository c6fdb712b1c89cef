# The end-to-end training tests again with the other model families'
# embedded yamls (Ultralytics' own, in plugins/<task>/models):
# test_train_<task> takes the model yaml as its argument and relaxes what
# a family's slower start on these short runs needs (see each test's
# comment). Each entry: task, model yaml, family (the test's name suffix).
#   yolo11: C3k2, C2PSA's attention, Detect's current head;
#   yolo12: A2C2f's area attention;
#   yolov9: GELAN modules, RepConv, AConv's average pool;
#   yolo26: Segment26 (Proto26's semantic branch, the one-to-one head),
#           for which test_train_segment checks sem_loss falls.
foreach(entry
    "detect;yolo11n.yaml;yolo11" "segment;yolo11n-seg.yaml;yolo11" "classify;yolo11n-cls.yaml;yolo11"
    "detect;yolo12n.yaml;yolo12" "segment;yolo12n-seg.yaml;yolo12" "classify;yolo12n-cls.yaml;yolo12"
    "detect;yolov9t.yaml;yolov9"
    "segment;yolo26n-seg.yaml;yolo26")
  list(GET entry 0 task)
  list(GET entry 1 model)
  list(GET entry 2 family)
  if(TARGET test_train_${task})
    add_test(NAME test_train_${task}_${family} COMMAND test_train_${task} ${model})
    set_tests_properties(test_train_${task}_${family} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
      LABELS "${task};e2e;${family}"
      ENVIRONMENT "YOLO_DATASETS_DIR=${YOLO_DATASETS_DIR};YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR};YOLO_BINARY_DIR=${CMAKE_BINARY_DIR};YOLO_PLUGIN_PATH=${YOLO_PLUGIN_OUTPUT_DIR}")
  endif()
endforeach()
