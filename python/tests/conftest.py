"""Shared fixtures: the interop checkpoints (YOLO_INTEROP_DIR), a synthetic
image written as PNG (lossless: the file and the array hold the same pixels)."""
import os
import struct
import zlib

import numpy as np
import pytest

INTEROP = os.environ.get("YOLO_INTEROP_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                                                          "interop"))


def interop(name):
    p = os.path.join(INTEROP, name)
    if not os.path.exists(p):
        pytest.skip("%s not found (set YOLO_INTEROP_DIR to the interop checkpoints)" % p)
    return p


def write_png(path, bgr):
    """An 8-bit RGB PNG of a BGR HWC uint8 array (no encoder library needed)."""
    rgb = np.ascontiguousarray(bgr[..., ::-1])
    h, w = rgb.shape[:2]
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def shapes_image(h=240, w=320, seed=0):
    """A picture in the manner of data=shapes: a filled circle, rectangle and
    triangle on a noisy background (BGR)."""
    rng = np.random.RandomState(seed)
    img = (rng.rand(h, w, 3) * 40 + 100).astype(np.uint8)
    yy, xx = np.mgrid[0:h, 0:w]
    img[(yy - 80) ** 2 + (xx - 80) ** 2 < 45 ** 2] = (40, 40, 220)
    img[140:220, 170:290] = (220, 60, 30)
    tri = (yy > 30) & (yy < 120) & (np.abs(xx - 240) < (yy - 30) * 0.6)
    img[tri] = (40, 200, 40)
    return img


@pytest.fixture(scope="session")
def image_file(tmp_path_factory):
    img = shapes_image()
    p = tmp_path_factory.mktemp("img") / "shapes.png"
    write_png(str(p), img)
    return str(p), img
