# Interop tests (core/interop: Ultralytics .pt import, ONNX and safetensors
# export) read the reference checkpoints and PyTorch outputs of
# YOLO_INTEROP_DIR and skip with a printed reason when it is absent.
set(YOLO_INTEROP_DIR "${CMAKE_SOURCE_DIR}/../shared/interop" CACHE PATH "Ultralytics reference checkpoints for tests")
foreach(t test_interop_pt test_interop_cli test_interop_onnx)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "YOLO_INTEROP_DIR=${YOLO_INTEROP_DIR}")
  endif()
endforeach()
# ONNX Runtime for the export test: the npm package onnxruntime-node, which
# scripts/install-deps.sh installs (npm install --ignore-scripts) here.
set(YOLO_ORT_NODE_DIR "$ENV{HOME}/.cache/yolo/npm" CACHE PATH "folder holding node_modules/onnxruntime-node")
if(TEST test_interop_onnx)
  set_property(TEST test_interop_onnx APPEND PROPERTY ENVIRONMENT "YOLO_ORT_NODE_DIR=${YOLO_ORT_NODE_DIR}")
endif()
