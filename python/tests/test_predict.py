"""Prediction through the Python package: sources, Results attributes."""
import glob
import json
import os

import numpy as np
import pytest

from conftest import interop, shapes_image
from yolo import YOLO, YOLOError


@pytest.fixture(scope="module")
def detect_model():
    return YOLO(interop("yolov8n-shapes.pt"))


def test_path_and_array_equal(detect_model, image_file):
    path, img = image_file
    a = detect_model(path, conf=0.05)[0]
    b = detect_model.predict(img, conf=0.05)[0]
    assert len(a.boxes) >= 2, "the synthetic shapes should be found"
    np.testing.assert_array_equal(a.boxes.data, b.boxes.data)
    assert a.path == path
    # a path source's orig_img: the file as the C library decodes it (a PNG: the same pixels)
    assert a.orig_img.dtype == np.uint8 and a.orig_img.shape == img.shape
    np.testing.assert_array_equal(a.orig_img, img)
    assert b.orig_img is img and b.orig_shape == img.shape[:2] == a.orig_shape


def test_strided_and_copied_arrays(detect_model, image_file):
    path, img = image_file
    ref = detect_model(img, conf=0.05)[0].boxes.data
    wide = np.zeros((img.shape[0], img.shape[1] + 37, 3), np.uint8)
    wide[:, :img.shape[1]] = img
    view = wide[:, :img.shape[1]]  # rows 3*(w+37) bytes apart: passed without a copy
    assert not view.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(detect_model(view, conf=0.05)[0].boxes.data, ref)
    rgb = np.ascontiguousarray(img[..., ::-1])
    flipped = rgb[..., ::-1]  # BGR again, a negative channel stride: copied
    np.testing.assert_array_equal(detect_model(flipped, conf=0.05)[0].boxes.data, ref)
    # an RGB array read as BGR is another image
    assert not np.array_equal(detect_model(rgb, conf=0.05)[0].boxes.data, ref)


def test_pil_image(detect_model, image_file):
    Image = pytest.importorskip("PIL.Image")
    path, img = image_file
    pil = Image.fromarray(np.ascontiguousarray(img[..., ::-1]))
    np.testing.assert_array_equal(detect_model(pil, conf=0.05)[0].boxes.data,
                                  detect_model(img, conf=0.05)[0].boxes.data)


def test_list_stream_folder_glob(detect_model, image_file):
    path, img = image_file
    folder = os.path.dirname(path)
    gen = detect_model.predict([img, path, folder, os.path.join(folder, "*.png")], stream=True, conf=0.05)
    assert not isinstance(gen, list)
    rs = list(gen)
    assert len(rs) == 4
    for r in rs[1:]:
        np.testing.assert_array_equal(r.boxes.data, rs[0].boxes.data)


def test_boxes_attributes(detect_model, image_file):
    path, img = image_file
    r = detect_model(img, conf=0.05)[0]
    b, n = r.boxes, len(r.boxes)
    h, w = img.shape[:2]
    for name, shape in (("xyxy", (n, 4)), ("xywh", (n, 4)), ("xyxyn", (n, 4)), ("xywhn", (n, 4)), ("conf", (n,)),
                        ("cls", (n,)), ("data", (n, 6))):
        v = getattr(b, name)
        assert isinstance(v, np.ndarray) and v.shape == shape and v.dtype == np.float32, name
    assert b.id is None and r.masks is None and r.probs is None
    assert np.all(np.diff(b.conf) <= 0), "most confident first"
    np.testing.assert_allclose(b.xywhn, b.xywh / [w, h, w, h], rtol=1e-6)
    np.testing.assert_allclose(b.xyxyn, b.xyxy / [w, h, w, h], rtol=1e-6)
    x1y1 = b.xywh[:, :2] - b.xywh[:, 2:] / 2
    np.testing.assert_allclose(x1y1, b.xyxy[:, :2], atol=1e-4)
    assert r.names == detect_model.names == {0: "circle", 1: "rectangle", 2: "triangle"}
    assert detect_model.task == "detect"
    assert set(r.speed) == {"preprocess", "inference", "postprocess"}
    assert r.speed["inference"] > 0 and all(v >= 0 for v in r.speed.values())
    s = r.summary()
    assert len(s) == n and s[0]["name"] == r.names[int(b.cls[0])] and set(s[0]["box"]) == {"x1", "y1", "x2", "y2"}
    assert json.loads(r.to_json()) == s


def test_save_txt(detect_model, image_file, tmp_path):
    path, img = image_file
    r = detect_model(img, conf=0.05)[0]
    f = tmp_path / "a.txt"
    r.save_txt(str(f), save_conf=True)
    rows = [list(map(float, line.split())) for line in f.read_text().splitlines()]
    assert len(rows) == len(r.boxes) and all(len(row) == 6 for row in rows)
    got = np.array(rows)
    np.testing.assert_allclose(got[:, 0], r.boxes.cls)
    np.testing.assert_allclose(got[:, 1:5], r.boxes.xywhn, rtol=1e-5)
    np.testing.assert_allclose(got[:, 5], r.boxes.conf, rtol=1e-5)
    g = tmp_path / "b.txt"
    r.save_txt(str(g))
    assert all(len(line.split()) == 5 for line in g.read_text().splitlines())


def _changed(a, b):
    return np.any(a != b, axis=2)


def test_plot_and_save(detect_model, image_file, tmp_path):
    path, img = image_file
    r = detect_model(img, conf=0.05)[0]
    assert len(r.boxes) >= 2
    before = img.copy()
    out = r.plot()
    assert out.shape == img.shape and out.dtype == np.uint8 and out.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(img, before)  # drawn on a copy
    ch = _changed(out, img)
    x1, y1, x2, y2 = (int(round(float(v))) for v in r.boxes.xyxy[0])
    assert ch[(y1 + y2) // 2, x1] and ch[(y1 + y2) // 2, x2]  # box 0's outline
    bare = r.plot(labels=False, line_width=2)
    near = np.zeros(img.shape[:2], bool)
    for b in r.boxes.xyxy:
        x1, y1, x2, y2 = (int(round(float(v))) for v in b)
        near[max(y1 - 4, 0):y2 + 5, max(x1 - 4, 0):x2 + 5] = True
        near[y1 + 5:y2 - 4, x1 + 5:x2 - 4] = False
    assert _changed(bare, img).any() and not _changed(bare, img)[~near].any()  # outlines only
    assert ch.sum() > _changed(bare, img).sum()  # the labels
    np.testing.assert_array_equal(r.plot(boxes=False), img)
    assert not np.array_equal(r.plot(conf=False), out)
    # a path source: orig_img read by the C library, the same drawing
    rp = detect_model(path, conf=0.05)[0]
    np.testing.assert_array_equal(rp.plot(), out)
    f = rp.save(str(tmp_path / "a.png"))
    assert f == str(tmp_path / "a.png")
    from yolo.results import read_image
    np.testing.assert_array_equal(read_image(f), out)  # PNG: lossless
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert r.save() == "results_image0.jpg" and rp.save() == "results_shapes.png"
        with open("results_image0.jpg", "rb") as fh:
            assert fh.read(3) == b"\xff\xd8\xff"
        assert read_image("results_image0.jpg").shape == img.shape
    finally:
        os.chdir(cwd)
    with pytest.raises(YOLOError, match="extension"):
        r.save(str(tmp_path / "a.gif"))
    with pytest.raises(YOLOError, match="size"):
        r.plot(img=img[:100])
    gray = r.plot(img=img[..., 0])  # another image of the same size: drawn on it
    assert gray.shape == img.shape


@pytest.mark.parametrize("model,keys", [("yolov8n-shapes.pt", {"conf": 0.05}),
                                        ("yolov8n-seg-coco8.pt", {"conf": 0.0001, "max_det": 5}),
                                        ("yolov8n-cls-mnist160.pt", {})])
def test_plot_is_predicts_picture(model, keys, image_file, tmp_path):
    """plot() draws what `yolo predict save=True` saves (a PNG source: a PNG picture, compared exactly)."""
    path = image_file[0]
    m = YOLO(interop(model))
    m.run("predict", source=path, save=True, project=str(tmp_path), name="run", **keys)
    saved = tmp_path / "run" / os.path.basename(path)
    from yolo.results import read_image
    np.testing.assert_array_equal(m(path, **keys)[0].plot(), read_image(str(saved)))


def test_classify_probs():
    m = YOLO(interop("yolov8n-cls-mnist160.pt"))
    assert m.task == "classify" and len(m.names) == 10
    img = shapes_image(64, 64, seed=3)
    r = m(img)[0]
    p = r.probs
    assert r.boxes is None and r.masks is None
    assert isinstance(p.data, np.ndarray) and p.data.shape == (10,) and p.data.dtype == np.float32
    assert abs(float(p.data.sum()) - 1) < 1e-4
    assert p.top1 == int(np.argmax(p.data)) and len(p.top5) == 5 and p.top5[0] == p.top1
    assert np.all(np.diff(p.top5conf) <= 0) and p.top1conf == p.data[p.top1]
    assert r.summary()[0]["class"] == p.top1
    out = r.plot()
    assert out.shape == img.shape and out.dtype == np.uint8
    assert _changed(out, img)[:16, :16].any()  # the top-5 list at the top-left
    np.testing.assert_array_equal(r.plot(probs=False), img)


def _seg_image(tmp_path):
    imgs = sorted(glob.glob(os.path.join(os.environ.get("YOLO_CACHE_DIR", os.path.expanduser("~/.cache/yolo")),
                                         "shapes-v1", "images", "val", "*.jpg")))
    return imgs[0] if imgs else shapes_image()


def test_segment_masks(tmp_path):
    m = YOLO(interop("yolov8n-seg-coco8.pt"))
    assert m.task == "segment"
    src = _seg_image(tmp_path)
    r = m(src, conf=0.0001, max_det=5)[0]
    n = len(r.boxes)
    assert n > 0 and r.masks is not None and len(r.masks) == n
    d = r.masks.data
    assert d.dtype == np.uint8 and d.ndim == 3 and d.shape[0] == n and set(np.unique(d)) <= {0, 1}
    sx, sy, px, py = r.masks._letterbox
    h, w = r.orig_shape
    # the masks are at the letterboxed input's size: the image scaled, plus the padding
    assert abs(d.shape[2] - (w * sx + 2 * px)) <= 1 and abs(d.shape[1] - (h * sy + 2 * py)) <= 1
    tol = 2 / min(sx, sy) + 1
    assert len(r.masks.xy) == n and len(r.masks.xyn) == n
    for i in range(n):
        poly = r.masks.xy[i]
        if not d[i].any():
            assert poly.shape == (0, 2)
            continue
        assert poly.dtype == np.float32 and poly.ndim == 2 and poly.shape[1] == 2 and len(poly) >= 1
        assert poly.min() >= 0 and poly[:, 0].max() <= w and poly[:, 1].max() <= h
        box = r.boxes.xyxy[i]
        assert poly[:, 0].min() >= box[0] - tol and poly[:, 1].min() >= box[1] - tol
        assert poly[:, 0].max() <= box[2] + tol and poly[:, 1].max() <= box[3] + tol
        np.testing.assert_allclose(r.masks.xyn[i], poly / [w, h], rtol=1e-6)
    assert "segments" in r.summary()[0]
    assert r.orig_img is not None and r.orig_img.shape[:2] == r.orig_shape
    out, nomask = r.plot(), r.plot(masks=False)
    assert out.shape == r.orig_img.shape
    if d.any():
        assert not np.array_equal(out, nomask)  # the masks' overlay
    np.testing.assert_array_equal(r.plot(masks=False, boxes=False), r.orig_img)


def test_contour_trace():
    from yolo.results import mask_contour
    m = np.zeros((20, 30), np.uint8)
    m[2:5, 3:6] = 1  # a small component
    m[8:18, 10:25] = 1  # the largest
    m[12:14, 15:18] = 0  # a hole: the outer contour ignores it
    c = mask_contour(m)
    assert c[:, 0].min() == 10 and c[:, 0].max() == 24 and c[:, 1].min() == 8 and c[:, 1].max() == 17
    assert len(c) == 4, "a rectangle simplifies to its corners: %s" % c
    assert mask_contour(np.zeros((4, 4), np.uint8)).shape == (0, 2)
    one = np.zeros((4, 4), np.uint8)
    one[1, 2] = 1
    assert mask_contour(one).tolist() == [[2, 1]]


def test_predict_errors(detect_model, image_file):
    with pytest.raises(YOLOError, match="imgsz"):
        detect_model(image_file[0], imgsz="big")
    with pytest.raises(YOLOError, match="bogus_key"):
        detect_model(image_file[0], bogus_key=1)
    with pytest.raises(YOLOError, match="save"):
        detect_model(image_file[0], save=True)
    assert len(detect_model(image_file[0], save=False, show=False, verbose=False, conf=0.05)[0].boxes) >= 2
    with pytest.raises(YOLOError):
        YOLO("/nonexistent/model.pt")
    with pytest.raises(YOLOError):
        detect_model("/nonexistent/dir/*.jpg")
    with pytest.raises(TypeError):
        detect_model(np.zeros((8, 8, 3), np.float32))
    assert issubclass(YOLOError, RuntimeError) and issubclass(YOLOError, ValueError)
    # the model still predicts after errors
    assert len(detect_model(image_file[1], conf=0.05)[0].boxes) >= 2


def test_save_txt_as_cli(detect_model, image_file, tmp_path):
    """Results.save_txt writes what `yolo predict save_txt=True save_conf=True` writes (run through yolo_run)."""
    path, img = image_file
    detect_model.run("predict", source=path, save_txt=True, save_conf=True, conf=0.05, project=str(tmp_path),
                     name="cli")
    cli = glob.glob(str(tmp_path / "cli" / "**" / "*.txt"), recursive=True)
    assert len(cli) == 1
    mine = tmp_path / "mine.txt"
    detect_model(path, conf=0.05)[0].save_txt(str(mine), save_conf=True)
    a = np.loadtxt(cli[0], ndmin=2)
    b = np.loadtxt(str(mine), ndmin=2)
    assert a.shape == b.shape and a.shape[1] == 6
    np.testing.assert_allclose(a, b, atol=2e-6)


def test_gil_released_during_predict(detect_model, image_file):
    """ctypes.CDLL drops the GIL during C calls: a Python thread runs while
    one prediction runs (with the GIL held it would not run at all)."""
    import ctypes
    import threading
    import time
    from yolo import _lib
    assert not (_lib.lib._func_flags_ & ctypes._FUNCFLAG_PYTHONAPI), "loaded as PyDLL"
    img = np.ascontiguousarray(np.tile(image_file[1], (2, 2, 1)))
    detect_model(img, imgsz=640)
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        c0, t0 = count[0], time.perf_counter()
        time.sleep(0.1)
        rate = (count[0] - c0) / (time.perf_counter() - t0)  # ticks a second, nothing else running
        c0, t0 = count[0], time.perf_counter()
        detect_model(img, imgsz=640)
        dt = time.perf_counter() - t0
        ticks = count[0] - c0
    finally:
        stop.set()
        t.join()
    assert ticks > 0.05 * rate * dt, "%d ticks during a %.3f s prediction, %.0f a second alone" % (ticks, dt, rate)


def test_fuse(image_file):
    path, img = image_file
    model = YOLO(interop("yolov8n-shapes.pt"))
    before = model(img, conf=0.05)[0].boxes.data
    assert model.fuse() is model and model.fuse() is model  # twice is once
    after = model(img, conf=0.05)[0].boxes.data
    assert len(before) >= 2 and after.shape == before.shape
    np.testing.assert_allclose(after, before, rtol=1e-3, atol=1e-2)
    # other keys reopen the predictor: it stays fused
    model(img, conf=0.1)
    assert model._fused


def test_show_without_a_viewer(detect_model, image_file, monkeypatch):
    """show() opens PIL's or OpenCV's viewer; with neither it says so (never a silent no-op)."""
    import builtins
    real_import = builtins.__import__

    def no_viewers(name, *args, **kwargs):
        if name in ("PIL", "cv2") or name.startswith("PIL."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    r = detect_model(image_file[1], conf=0.05)[0]
    monkeypatch.setattr(builtins, "__import__", no_viewers)
    with pytest.raises(YOLOError, match="no image viewer"):
        r.show()
