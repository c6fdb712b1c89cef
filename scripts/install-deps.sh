#!/bin/sh
# Installs the Debian 12 packages that yolo's build, tests and runs need.
# Idempotent: packages already present are left as they are.
set -eu

PACKAGES="
  build-essential cmake pkg-config git
  libyaml-dev libarchive-dev
  libdnnl-dev libopenblas-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libtiff-dev
  libcairo2-dev fonts-dejavu-core
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers glslang-tools
  libopenmpi-dev openmpi-bin
  python3
  python3-onnx python3-opencv
  python3-numpy python3-pytest
"
# a node from elsewhere (e.g. NodeSource, which bundles npm and conflicts
# with Debian's npm) is used as it is
command -v npm > /dev/null || PACKAGES="$PACKAGES nodejs npm"
# python3-onnx, python3-opencv, nodejs/npm: the consumers the ONNX export is
# tested against (onnx.checker, OpenCV DNN, and ONNX Runtime from npm below).
# python3-numpy, python3-pytest: the Python package python/yolo and its
# tests (ctest python_package).

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# ONNX Runtime (CPU) for tests/test_interop_onnx.c: the npm package ships
# libonnxruntime.so.1; its install script would fetch a CUDA build from
# outside, hence --ignore-scripts. The folder is tests/interop.cmake's
# YOLO_ORT_NODE_DIR default.
ORT_DIR="${YOLO_ORT_NODE_DIR:-$HOME/.cache/yolo/npm}"
if [ -d "$ORT_DIR/node_modules/onnxruntime-node" ]; then
  echo "install-deps: onnxruntime-node present in $ORT_DIR"
elif command -v npm > /dev/null; then
  echo "install-deps: npm install onnxruntime-node into $ORT_DIR"
  mkdir -p "$ORT_DIR"
  (cd "$ORT_DIR" && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node) ||
    echo "install-deps: npm install onnxruntime-node failed; the ONNX Runtime checks will be skipped"
fi
