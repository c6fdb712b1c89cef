"""Results of a prediction, with Ultralytics' attribute names and shapes
(numpy arrays instead of torch tensors)."""
import json
import os

import numpy as np

from . import _lib

__all__ = ["Results", "Boxes", "Masks", "Probs"]


class _BaseTensor:
    """Ultralytics' BaseTensor: per-object rows in data, of an image of orig_shape (h, w)."""

    def __init__(self, data, orig_shape):
        self.data = data
        self.orig_shape = orig_shape

    def __len__(self):
        return len(self.data)

    @property
    def shape(self):
        return self.data.shape


class Boxes(_BaseTensor):
    """Detections: data (n, 6) float32 rows x1 y1 x2 y2 conf cls in the
    original image's pixels, most confident first."""

    def __init__(self, data, orig_shape):
        super().__init__(data, orig_shape)
        self.id = None
        self.is_track = False

    @property
    def xyxy(self):
        return self.data[:, :4]

    @property
    def conf(self):
        return self.data[:, 4]

    @property
    def cls(self):
        return self.data[:, 5]

    @property
    def xywh(self):
        b = self.xyxy
        out = np.empty_like(b)
        out[:, 0] = (b[:, 0] + b[:, 2]) / 2
        out[:, 1] = (b[:, 1] + b[:, 3]) / 2
        out[:, 2] = b[:, 2] - b[:, 0]
        out[:, 3] = b[:, 3] - b[:, 1]
        return out

    def _norm(self, b):
        h, w = self.orig_shape
        return (b / np.array([w, h, w, h], dtype=np.float32)).astype(np.float32)

    @property
    def xyxyn(self):
        return self._norm(self.xyxy)

    @property
    def xywhn(self):
        return self._norm(self.xywh)

    def __repr__(self):
        return "Boxes(n=%d)\n%s" % (len(self), self.data)


def _runs_components(m):
    """Connected components (8-connected) of a 0/1 mask through row runs:
    returns (runs, labels, areas) where runs is a list of (y, x0, x1)."""
    runs = []
    row_start = []
    padded = np.zeros((m.shape[0], m.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = m != 0
    d = np.diff(padded, axis=1)
    ys, xs = np.nonzero(d)
    vals = d[ys, xs]
    # per row: starts (+1) at x, ends (-1) at x (exclusive end = x)
    i = 0
    n = len(ys)
    while i < n:
        y = int(ys[i])
        row_start.append(len(runs))
        while i < n and ys[i] == y:
            x0 = int(xs[i])
            x1 = int(xs[i + 1]) - 1  # vals[i] == 1, vals[i+1] == -1
            runs.append((y, x0, x1))
            i += 2
    parent = list(range(len(runs)))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    # union runs of consecutive rows that touch (8-connectivity)
    by_row = {}
    for k, (y, x0, x1) in enumerate(runs):
        by_row.setdefault(y, []).append(k)
    for y, ks in by_row.items():
        prev = by_row.get(y - 1)
        if not prev:
            continue
        j = 0
        for k in ks:
            _, x0, x1 = runs[k]
            while j < len(prev) and runs[prev[j]][2] < x0 - 1:
                j += 1
            jj = j
            while jj < len(prev) and runs[prev[jj]][1] <= x1 + 1:
                ra, rb = find(k), find(prev[jj])
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
                jj += 1
    del vals
    labels = [find(k) for k in range(len(runs))]
    areas = {}
    for k, (y, x0, x1) in enumerate(runs):
        areas[labels[k]] = areas.get(labels[k], 0) + x1 - x0 + 1
    return runs, labels, areas


_DIRS = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]  # (dx, dy), clockwise in image coords


def _trace(m, x0, y0):
    """Moore-neighbour boundary trace of the component holding (x0, y0), its
    top-most then left-most pixel; returns the boundary pixels (x, y) in order."""
    h, w = m.shape

    def on(x, y):
        return 0 <= x < w and 0 <= y < h and m[y, x]

    pts = [(x0, y0)]
    x, y = x0, y0
    back = 4  # we came from the west (the pixel left of the start is background)
    start_state = None
    for _ in range(4 * (h * w) + 8):
        found = False
        for k in range(8):
            d = (back + 1 + k) % 8
            nx, ny = x + _DIRS[d][0], y + _DIRS[d][1]
            if on(nx, ny):
                # the backtrack direction for the next step: from the new pixel back towards the last background one
                back = (d + 4) % 8
                x, y = nx, ny
                found = True
                break
        if not found:  # a single pixel
            break
        state = (x, y, back)
        if start_state is None:
            start_state = state
        elif state == start_state:
            break
        pts.append((x, y))
    if len(pts) > 1 and pts[-1] == pts[0]:
        pts.pop()
    return pts


def _simplify(p):
    """Drops the points of straight runs (as cv2's CHAIN_APPROX_SIMPLE)."""
    if len(p) < 3:
        return p
    d_prev = p - np.roll(p, 1, axis=0)
    d_next = np.roll(p, -1, axis=0) - p
    keep = np.any(d_prev != d_next, axis=1)
    return p[keep] if keep.any() else p[:1]


def mask_contour(m):
    """The outer boundary of the largest 8-connected component of a 0/1 mask,
    as an (k, 2) float32 array of pixel coordinates (x, y); (0, 2) for an empty mask."""
    runs, labels, areas = _runs_components(m)
    if not runs:
        return np.zeros((0, 2), dtype=np.float32)
    best = max(areas, key=lambda lab: areas[lab])
    k = labels.index(best)  # runs are in raster order: the component's top-left pixel
    y0, x0, _ = runs[k]
    pts = np.array(_trace(m, x0, y0), dtype=np.float32)
    return _simplify(pts)


class Masks(_BaseTensor):
    """Instance masks: data (n, H, W) uint8 at the model's input size (the
    letterboxed image, as Ultralytics without retina_masks)."""

    def __init__(self, data, orig_shape, letterbox):
        super().__init__(data, orig_shape)
        self._letterbox = letterbox  # scale_x, scale_y, pad_x, pad_y
        self._xy = None

    @property
    def xy(self):
        """Per mask, the outer contour of its largest component mapped to
        the original image's pixels: a list of (k, 2) float32 arrays."""
        if self._xy is None:
            sx, sy, px, py = self._letterbox
            h, w = self.orig_shape
            out = []
            for m in self.data:
                c = mask_contour(m)
                if len(c):
                    c = np.stack([(c[:, 0] - px) / sx, (c[:, 1] - py) / sy], axis=1)
                    c[:, 0] = np.clip(c[:, 0], 0, w)
                    c[:, 1] = np.clip(c[:, 1], 0, h)
                out.append(c.astype(np.float32))
            self._xy = out
        return self._xy

    @property
    def xyn(self):
        h, w = self.orig_shape
        return [(c / np.array([w, h], dtype=np.float32)).astype(np.float32) for c in self.xy]


class Probs:
    """Classification probabilities: data (nc,) float32."""

    def __init__(self, data):
        self.data = data

    @property
    def top1(self):
        return int(np.argmax(self.data))

    @property
    def top5(self):
        return [int(i) for i in np.argsort(-self.data, kind="stable")[:5]]

    @property
    def top1conf(self):
        return np.float32(self.data[self.top1])

    @property
    def top5conf(self):
        return self.data[self.top5]

    def __len__(self):
        return len(self.data)


def _check(status, what):
    if status != _lib.OK:
        from .model import _raise
        _raise(status, what)


def read_image(path):
    """An image file decoded by the C library as predict reads a source
    (JPEG, PNG, BMP, WebP, TIFF; EXIF orientation applied): HWC uint8 BGR."""
    px = _lib.P(_lib.ctypes.c_uint8)()
    w, h = _lib.c_int(0), _lib.c_int(0)
    _check(_lib.image_read(os.fspath(path).encode(), _lib.PIXELS_BGR, _lib.ctypes.byref(px), _lib.ctypes.byref(w),
                           _lib.ctypes.byref(h)), "read_image")
    try:
        return np.ctypeslib.as_array(px, shape=(h.value, w.value, 3)).copy()
    finally:
        _lib.image_data_free(px)


def _packed_bgr(img):
    """img (HWC uint8, 3 or 4 channels, or HW grey) as BGR rows of packed pixels the C library takes."""
    img = np.asarray(img)
    if img.dtype != np.uint8:
        raise TypeError("an image must be uint8, not %s" % img.dtype)
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    if img.ndim != 3 or img.shape[2] not in (3, 4):
        raise ValueError("an image must be HxWx3 (BGR), not shape %s" % (img.shape,))
    img = img[:, :, :3]
    if not (img.strides[2] == 1 and img.strides[1] == 3 and img.strides[0] >= 3 * img.shape[1]):
        img = np.ascontiguousarray(img)
    return img


def write_image(filename, img):
    """Writes img (HWC uint8 BGR) as JPEG (.jpg, .jpeg; quality 95) or PNG
    (.png) by the extension, with the C library's encoders."""
    img = _packed_bgr(img)
    h, w = img.shape[:2]
    _check(_lib.image_write(os.fspath(filename).encode(), img.ctypes.data, w, h, img.strides[0], _lib.PIXELS_BGR),
           "save")
    return filename


class Results:
    """One image's prediction. orig_img: the image predicted (BGR, HWC
    uint8): the array given, or for a path source the file as the C library
    decodes it, read when first asked for (a folder's results do not hold
    every image). speed: milliseconds of 'preprocess', 'inference' and
    'postprocess', as Ultralytics."""

    def __init__(self, names, path, orig_shape, orig_img, boxes, masks, probs, speed, c_result=None):
        self._c = c_result  # a _lib.Result owning the yolo_result* that plot() draws
        self.names = names
        self.path = path
        self.orig_shape = orig_shape
        self._orig_img = orig_img
        self._orig_img_read = orig_img is not None
        self.boxes = boxes
        self.masks = masks
        self.probs = probs
        self.keypoints = None
        self.obb = None
        self.speed = speed

    def __len__(self):
        if self.probs is not None:
            return len(self.probs)
        return len(self.boxes) if self.boxes is not None else 0

    def __repr__(self):
        kind = "probs" if self.probs is not None else "boxes"
        return "yolo.Results(path=%r, orig_shape=%r, %s=%d)" % (self.path, self.orig_shape, kind, len(self))

    def verbose(self):
        if self.probs is not None:
            return ", ".join("%s %.2f" % (self.names[j], self.probs.data[j]) for j in self.probs.top5) + ", "
        if not len(self.boxes):
            return "(no detections), "
        cls = self.boxes.cls.astype(int)
        return "".join("%d %s%s, " % (n, self.names[c], "s" * (n > 1))
                       for c, n in zip(*np.unique(cls, return_counts=True)))

    def summary(self, normalize=False, decimals=5):
        """A list of dicts as Ultralytics' Results.summary()."""
        out = []
        if self.probs is not None:
            c = self.probs.top1
            return [{"name": self.names[c], "class": c, "confidence": round(float(self.probs.top1conf), decimals)}]
        h, w = self.orig_shape
        xy = self.masks.xy if self.masks is not None else None
        for i, row in enumerate(self.boxes.data):
            c = int(row[5])
            x1, y1, x2, y2 = (float(v) for v in row[:4])
            if normalize:
                x1, x2, y1, y2 = x1 / w, x2 / w, y1 / h, y2 / h
            d = {"name": self.names.get(c, str(c)), "class": c, "confidence": round(float(row[4]), decimals),
                 "box": {"x1": round(x1, decimals), "y1": round(y1, decimals), "x2": round(x2, decimals),
                         "y2": round(y2, decimals)}}
            if xy is not None:
                s = xy[i] / (np.array([w, h], dtype=np.float32) if normalize else 1)
                d["segments"] = {"x": [round(float(v), decimals) for v in s[:, 0]],
                                 "y": [round(float(v), decimals) for v in s[:, 1]]}
            out.append(d)
        return out

    def plot(self, conf=True, labels=True, boxes=True, masks=True, probs=True, line_width=None, img=None):
        """Ultralytics' Results.plot: the prediction drawn on a copy of
        orig_img (or img) by the C library as `yolo predict save=True` draws
        it (palette colours, "name 0.87" labels, masks at alpha 0.5,
        classify's top-5 at the top-left). Returns HWC uint8 BGR of
        orig_img's shape (3 channels)."""
        base = self.orig_img if img is None else img
        if base is None:
            raise ValueError("plot: no image (orig_img is None); pass img=")
        if self._c is None or not self._c.ptr:
            raise ValueError("plot: this Results holds no C result to draw")
        src = _packed_bgr(base)
        h, w = src.shape[:2]
        out = np.empty((h, w, 3), dtype=np.uint8)
        flags = ((not conf) * _lib.PLOT_NO_CONF | (not labels) * _lib.PLOT_NO_LABELS |
                 (not boxes) * _lib.PLOT_NO_BOXES | (not masks) * _lib.PLOT_NO_MASKS | (not probs) * _lib.PLOT_NO_PROBS)
        _check(_lib.result_plot(self._c.ptr, src.ctypes.data, w, h, src.strides[0], _lib.PIXELS_BGR, flags,
                                float(line_width) if line_width else 0.0, out.ctypes.data, out.strides[0]), "plot")
        return out

    def save(self, filename=None, *args, **kwargs):
        """Ultralytics' Results.save: plot(*args, **kwargs) written to
        filename, JPEG or PNG by its extension; by default
        "results_<name of path>" as Ultralytics names it ("results_image0.jpg"
        for an array), its extension .jpg unless .jpg, .jpeg or .png (the
        encoders the C library has). Returns the filename."""
        if not filename:
            stem, ext = os.path.splitext(os.path.basename(self.path))
            filename = "results_%s%s" % (stem, ext if ext.lower() in (".jpg", ".jpeg", ".png") else ".jpg")
        return write_image(filename, self.plot(*args, **kwargs))

    def show(self, *args, **kwargs):
        """Ultralytics' Results.show: plot(*args, **kwargs) in an image
        viewer, through PIL's Image.show (as Ultralytics) or else OpenCV's
        imshow. Neither installed: YOLOError saying so (plot() returns the
        picture, save() writes it)."""
        img = self.plot(*args, **kwargs)
        try:
            from PIL import Image
        except ImportError:
            Image = None
        if Image is not None:
            Image.fromarray(img[..., ::-1]).show(title=self.path)
            return
        try:
            import cv2
        except ImportError:
            from .model import YOLOError
            raise YOLOError("Results.show(): no image viewer: it needs PIL (python3-pil) or OpenCV "
                            "(python3-opencv); plot() returns the picture and save() writes it") from None
        cv2.imshow(self.path or "yolo", img)
        cv2.waitKey(0)

    def to_json(self, normalize=False, decimals=5):
        return json.dumps(self.summary(normalize=normalize, decimals=decimals), indent=2)

    def save_txt(self, txt_file, save_conf=False):
        """Ultralytics' label format, appended to txt_file: "cls cx cy w h [conf]"
        normalized (segment: "cls x1 y1 x2 y2 ... [conf]", the polygon);
        classify: "conf name" per top-5 class."""
        lines = []
        if self.probs is not None:
            lines = ["%.2f %s" % (self.probs.data[j], self.names[j]) for j in self.probs.top5]
        elif self.boxes is not None:
            xywhn = self.boxes.xywhn
            segs = self.masks.xyn if self.masks is not None else None
            for i in range(len(self.boxes)):
                c = int(self.boxes.cls[i])
                coords = segs[i].reshape(-1) if segs is not None else xywhn[i]
                line = [c] + [float(v) for v in coords] + ([float(self.boxes.conf[i])] if save_conf else [])
                lines.append(("%g " * len(line)).rstrip() % tuple(line))
        if lines:
            with open(txt_file, "a") as f:
                f.writelines(s + "\n" for s in lines)
        return txt_file


    @property
    def orig_img(self):
        if not self._orig_img_read:
            self._orig_img_read = True
            try:
                self._orig_img = read_image(self.path)
            except Exception:  # a member of an archive source: no file to read
                self._orig_img = None
        return self._orig_img

    @orig_img.setter
    def orig_img(self, img):
        self._orig_img, self._orig_img_read = img, True


def from_c(r, names, orig_img, own=False):
    """Reads a yolo_result* into a Results (copies everything). own: the
    Results takes r (plot() draws it; freed with the Results); else r may
    be freed after."""
    w, h = _lib.result_width(r), _lib.result_height(r)
    p = _lib.result_path(r)
    path = p.decode() if p else "image0.jpg"
    nc = _lib.c_int(0)
    probs_p = _lib.result_probs(r, _lib.ctypes.byref(nc))
    boxes = masks = probs = None
    if probs_p:
        probs = Probs(np.ctypeslib.as_array(probs_p, shape=(nc.value,)).astype(np.float32, copy=True))
    else:
        n = _lib.result_num_boxes(r)
        data = np.zeros((n, 6), dtype=np.float32)
        xyxy = (_lib.c_float * 4)()
        conf = _lib.c_float()
        cls = _lib.c_int()
        for i in range(n):
            _lib.result_box(r, i, xyxy, _lib.ctypes.byref(conf), _lib.ctypes.byref(cls))
            data[i, :4] = xyxy
            data[i, 4] = conf.value
            data[i, 5] = cls.value
        boxes = Boxes(data, (h, w))
        mw, mh = _lib.c_int(0), _lib.c_int(0)
        first = _lib.result_mask(r, 0, _lib.ctypes.byref(mw), _lib.ctypes.byref(mh)) if n else None
        lb = [_lib.c_float() for _ in range(4)]
        has_lb = _lib.result_letterbox(r, *[_lib.ctypes.byref(v) for v in lb]) == _lib.OK
        if first:
            md = np.empty((n, mh.value, mw.value), dtype=np.uint8)
            for i in range(n):
                mp = _lib.result_mask(r, i, _lib.ctypes.byref(mw), _lib.ctypes.byref(mh))
                md[i] = np.ctypeslib.as_array(mp, shape=(mh.value, mw.value))
            masks = Masks(md, (h, w), tuple(v.value for v in lb) if has_lb else (1.0, 1.0, 0.0, 0.0))
    ms = [_lib.ctypes.c_double() for _ in range(3)]
    _check(_lib.result_speed(r, *[_lib.ctypes.byref(v) for v in ms]), "speed")
    speed = dict(zip(("preprocess", "inference", "postprocess"), (v.value for v in ms)))
    return Results(names, path, (h, w), orig_img, boxes, masks, probs, speed,
                   _lib.Result(r) if own else None)
