#!/usr/bin/env python3
"""Predicting N in-memory W x H BGR images through the Python package
(python/yolo: YOLO(model)(array)) and through the C API directly
(bench_predict_image, built from bench/bench_predict_image.c), the same
pixels and keys on both sides, one untimed warm-up image each.

    python3 bench/python_predict.py [--model M] [--n 100] [--width 640] [--height 480]
                                    [--build build] [--rounds 5] [key=value ...]

Needs numpy. The library: YOLO_LIBRARY or <build>/lib/libyolo.so; the C
driver: <build>/bin/bench_predict_image. Prints ms/image for each side per round
and the median ratio python/c."""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "..", "shared", "interop", "yolov8n-coco8.pt"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("keys", nargs="*", help="predictor keys, e.g. imgsz=640 conf=0.25")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    os.environ.setdefault("YOLO_LIBRARY", os.path.join(build, "lib", "libyolo.so"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import numpy as np
    from yolo import YOLO

    keys = dict(k.split("=", 1) for k in a.keys)
    h, w = a.height, a.width
    yy, xx = np.mgrid[0:h, 0:w]
    base = (xx * 7 + yy * 13)[:, :, None] + np.arange(3) * 29
    images = [((base + i * 31) & 255).astype(np.uint8) for i in range(a.n)]  # as bench_predict_image makes them
    model = YOLO(a.model)
    model(images[0], **keys)  # warm-up
    driver = os.path.join(build, "bin", "bench_predict_image")
    if not os.access(driver, os.X_OK):
        print("c: %s not built (cmake --build %s --target bench_predict_image)" % (driver, build))
        return
    # rounds alternate the two sides: on a shared machine the load drifts
    # between runs, so only ratios of neighbouring runs mean anything
    ratios = []
    for r in range(a.rounds):
        t = time.perf_counter()
        boxes = 0
        for img in images:
            boxes += len(model(img, **keys)[0].boxes or [])
        py_ms = (time.perf_counter() - t) * 1000 / a.n
        out = subprocess.run([driver, a.model, str(a.n), str(w), str(h)] + a.keys, check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        line = [s for s in out.splitlines() if s.startswith("c:")][-1]
        c_ms = float(line.split(": ")[2].split()[0])
        ratios.append(py_ms / c_ms)
        print("round %d: python %.2f ms/image (%d boxes), %s; python/c %.3f" % (r + 1, py_ms, boxes, line, py_ms / c_ms))
    ratios.sort()
    print("python/c over %d rounds of %d images %dx%d: median %.3f (range %.3f-%.3f)" %
          (a.rounds, a.n, w, h, ratios[len(ratios) // 2], ratios[0], ratios[-1]))

if __name__ == "__main__":
    main()
