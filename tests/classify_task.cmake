# test_classify_task loads the classify plugin through the registry, so the
# plugins are built first; test_train_classify runs the built `yolo`
# binary (classify train data=shapes), so the CLI and plugins come first.
add_dependencies(test_classify_task ${YOLO_PLUGIN_TARGETS})
set_tests_properties(test_classify_task PROPERTIES TIMEOUT 60 LABELS classify)
add_dependencies(test_train_classify ${YOLO_PLUGIN_TARGETS} yolo_cli)
set_tests_properties(test_train_classify PROPERTIES TIMEOUT 300 LABELS "classify;e2e")
# test_train_augment runs short segment and classify trainings of the built
# `yolo` with copy_paste and each auto_augment policy.
add_dependencies(test_train_augment ${YOLO_PLUGIN_TARGETS} yolo_cli)
set_tests_properties(test_train_augment PROPERTIES TIMEOUT 300 LABELS "classify;segment;e2e")
