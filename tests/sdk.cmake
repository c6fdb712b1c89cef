# The SDK install test (tests/sdk_install_test.sh): installs this build to a
# temporary prefix, builds sdk/template against the installed files only,
# checks that `yolo checks` lists it and trains it briefly; builds
# sdk/examples/pose the same way and trains it briefly on shapes with
# keypoints (sdk/examples/pose/make_shapes_pose.sh).
add_test(NAME sdk_install COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sdk_install_test.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(sdk_install PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS sdk)
if(YOLO_SANITIZE)
  set_tests_properties(sdk_install PROPERTIES ENVIRONMENT "YOLO_SANITIZED=1")
endif()
