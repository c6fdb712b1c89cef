#!/bin/sh
# Runs the Python package's pytest suite (python/tests) with the first
# interpreter that has numpy and pytest; exit 77 (skipped) when none has.
# $1: the python/ folder. The environment (YOLO_LIBRARY, PYTHONPATH, ...)
# comes from tests/python.cmake.
dir="$1"
if [ -n "${YOLO_SANITIZED:-}" ]; then
  # an uninstrumented interpreter cannot load an ASan build of libyolo
  # without preloading libasan, and CPython's own leaks would fail LeakSanitizer
  echo "python_package: skipped: sanitized build (the Release run tests the package)"
  exit 77
fi
for py in "${YOLO_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] || continue
  command -v "$py" > /dev/null 2>&1 || continue
  if "$py" -c "import numpy, pytest" > /dev/null 2>&1; then
    cd "$dir/tests" || exit 1
    exec "$py" -m pytest -p no:cacheprovider -q -rs "$dir/tests"
  fi
done
echo "python_package: skipped: no python3 with numpy and pytest (apt-get install python3-numpy python3-pytest, or set YOLO_PYTHON)"
exit 77
