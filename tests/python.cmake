# The Python package (python/yolo, ctypes over libyolo.so): its pytest suite
# python/tests, run by tests/python_test.sh with the first python3 that has
# numpy and pytest (YOLO_PYTHON, then python3 on PATH, then /usr/bin/python3);
# skipped with the reason printed when there is none.
if(NOT YOLO_INTEROP_DIR)
  set(YOLO_INTEROP_DIR "${CMAKE_SOURCE_DIR}/../shared/interop")
endif()
add_test(NAME python_package
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/python_test.sh ${CMAKE_SOURCE_DIR}/python)
set_tests_properties(python_package PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS python
  ENVIRONMENT "YOLO_LIBRARY=$<TARGET_FILE:yolo>;YOLO_CLI=$<TARGET_FILE:yolo_cli>;YOLO_PLUGIN_PATH=${YOLO_PLUGIN_OUTPUT_DIR};YOLO_INTEROP_DIR=${YOLO_INTEROP_DIR};YOLO_DATASETS_DIR=${YOLO_DATASETS_DIR};PYTHONPATH=${CMAKE_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
