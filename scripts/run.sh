#!/bin/sh
# Installs dependencies, builds, and runs the main job.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
build/bin/yolo checks
