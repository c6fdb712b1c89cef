# test_classify_task loads the classify plugin through the registry, so the
# plugins are built first; test_train_classify runs the built `yolo`
# binary (classify train data=shapes), so the CLI and plugins come first.
add_dependencies(test_classify_task ${YOLO_PLUGIN_TARGETS})
set_tests_properties(test_classify_task PROPERTIES TIMEOUT 60 LABELS classify)
add_dependencies(test_train_classify ${YOLO_PLUGIN_TARGETS} yolo_cli)
set_tests_properties(test_train_classify PROPERTIES TIMEOUT 300 LABELS "classify;e2e")
