# The op reference cases (tests/op_reference.h): one library that the three
# suite programs run and test_ops_coverage enumerates.
add_library(yolo_op_reference STATIC op_reference.c ops_reference_cases.c ops_reference_train_cases.c
  conv_reference_cases.c)
target_include_directories(yolo_op_reference PRIVATE ${DNNL_INCLUDE_DIR})
target_link_libraries(yolo_op_reference PUBLIC yolo_test_util PRIVATE yolo_build_flags)
foreach(test test_ops_reference test_ops_reference_train test_conv_reference test_ops_coverage)
  target_link_libraries(${test} PRIVATE yolo_op_reference)
endforeach()
add_dependencies(test_ops_coverage test_dist)
