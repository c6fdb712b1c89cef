# Interop tests (core/interop: Ultralytics .pt import, ONNX and safetensors
# export) read the reference checkpoints and PyTorch outputs of
# YOLO_INTEROP_DIR and skip with a printed reason when it is absent.
set(YOLO_INTEROP_DIR "${CMAKE_SOURCE_DIR}/../shared/interop" CACHE PATH "Ultralytics reference checkpoints for tests")
foreach(t test_interop_pt)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "YOLO_INTEROP_DIR=${YOLO_INTEROP_DIR}")
  endif()
endforeach()
