"""YOLO: the Ultralytics-style model object over the C host API."""
import ctypes
import glob
import os

import numpy as np

from . import _lib
from .results import from_c

__all__ = ["YOLO", "YOLOError", "Metrics", "CALLBACK_EVENTS"]

CALLBACK_EVENTS = ("on_train_epoch_end", "on_fit_epoch_end", "on_train_end")


# File and window outputs: False is what the predictor does (returns results only), so it is dropped;
# True is refused by the C library naming the key.
_OFF_WHEN_FALSE = ("save", "save_txt", "save_conf", "save_crop", "show", "save_frames", "stream_buffer")


class YOLOError(RuntimeError, ValueError):
    """A failure of the C library: message is yolo_last_error(), status the yolo_status."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status
        self.status_name = _lib.status_name(status).decode() if status is not None else None


def _raise(status, what=None):
    msg = (_lib.last_error() or b"").decode(errors="replace")
    if not msg:
        msg = _lib.status_name(status).decode()
    raise YOLOError(("%s: %s" % (what, msg)) if what else msg, status)


def _fmt(v):
    """A value as the CLI reads it, written Python-style."""
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_fmt(x) for x in v) + "]"
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _keys(d):
    """A dict of keys as a NULL-terminated char** and the list keeping it alive."""
    pairs = [("%s=%s" % (k, _fmt(v))).encode() for k, v in d.items()]
    arr = (ctypes.c_char_p * (len(pairs) + 1))(*pairs, None)
    return arr, pairs


class Metrics:
    """Val's metrics: results_dict (results.csv's names -> float) and
    Ultralytics-like attributes: box.map50, box.map, box.mp, box.mr,
    seg.map50, seg.map, top1, top5, fitness."""

    class _Group:
        def __init__(self, d, tag):
            self.mp = d.get("metrics/precision(%s)" % tag)
            self.mr = d.get("metrics/recall(%s)" % tag)
            self.map50 = d.get("metrics/mAP50(%s)" % tag)
            self.map = d.get("metrics/mAP50-95(%s)" % tag)

    def __init__(self, d):
        self.results_dict = dict(d)
        self.box = Metrics._Group(d, "B")
        self.seg = Metrics._Group(d, "M")
        self.top1 = d.get("metrics/accuracy_top1")
        self.top5 = d.get("metrics/accuracy_top5")
        self.fitness = d.get("fitness")

    @property
    def keys(self):
        return list(self.results_dict)

    def __repr__(self):
        return "yolo.Metrics(%r)" % (self.results_dict,)


class TrainerState:
    """What a callback receives in place of Ultralytics' trainer: epoch (from
    0), metrics (dict, valid after the call too), event, and the model."""

    def __init__(self, model, event, epoch, metrics):
        self.model = model
        self.event = event
        self.epoch = epoch
        self.metrics = metrics


def _is_path_source(s):
    return isinstance(s, (str, os.PathLike))


class YOLO:
    """YOLO(model, task=None): model is a model yaml, a .ckpt or an
    Ultralytics .pt; task as `yolo predict task=...` (None: the model's)."""

    def __init__(self, model="yolov8n.yaml", task=None, verbose=False):
        self.model = os.fspath(model)
        self._task = task
        self._predictor = None
        self._predictor_keys = None
        self._callbacks = {e: [] for e in CALLBACK_EVENTS}
        self.metrics = None
        self._fused = False
        # open a predictor now: it checks the file and gives the task and the names
        self._open({})

    # ---- predictor -------------------------------------------------------
    def _open(self, keys):
        if self._predictor is not None and self._predictor_keys == keys:
            return self._predictor
        self._close()
        arr, keep = _keys(keys)
        out = ctypes.c_void_p()
        st = _lib.predictor_open(self.model.encode(), self._task.encode() if self._task else None, arr,
                                 ctypes.byref(out))
        del keep
        if st != _lib.OK:
            _raise(st)
        self._predictor, self._predictor_keys = out, dict(keys)
        if self._fused:  # a predictor reopened for other keys stays fused
            st = _lib.predictor_fuse(out)
            if st != _lib.OK:
                _raise(st)
        self._task = _lib.predictor_task(out).decode()
        n = _lib.predictor_num_classes(out)
        self._names = {}
        for i in range(n):
            s = _lib.predictor_class_name(out, i)
            self._names[i] = s.decode() if s else str(i)
        return out

    def _close(self):
        if self._predictor is not None:
            _lib.predictor_close(self._predictor)
            self._predictor = None

    def __del__(self):
        try:
            self._close()
        except Exception:
            pass

    @property
    def task(self):
        return self._task

    @property
    def names(self):
        return dict(self._names)

    def __repr__(self):
        return "yolo.YOLO(%r, task=%r)" % (self.model, self._task)

    # ---- predict ---------------------------------------------------------
    def __call__(self, source=None, stream=False, **keys):
        return self.predict(source, stream=stream, **keys)

    def predict(self, source=None, stream=False, **keys):
        """Results for source: a path (file, folder, glob, archive), a numpy
        HWC uint8 BGR array, a PIL.Image (RGB) or a list of these. stream=True
        gives a generator. Keys: the predictor's (imgsz, conf, iou, max_det,
        classes, agnostic_nms, half, device, threads, rect, end2end, data);
        others (save=True, save_txt=True, project, ...) are refused by the C
        library by name (save=False, show=False ... are accepted and dropped): use run('predict', ...) for the CLI's file outputs."""
        keys.pop("verbose", None)
        for k in _OFF_WHEN_FALSE:  # save=False etc. ask for what a predictor does anyway
            if k in keys and keys[k] is False:
                del keys[k]
        if source is None:
            raise ValueError("predict: source is required (a path, a numpy array, a PIL.Image or a list)")
        p = self._open(keys)
        gen = self._predict_gen(p, source)
        return gen if stream else list(gen)

    def _predict_gen(self, p, source):
        items = source if isinstance(source, (list, tuple)) else [source]
        for s in items:
            if _is_path_source(s):
                yield from self._predict_path(p, os.fspath(s))
            else:
                yield self._predict_array(p, s)

    def _predict_path(self, p, path):
        res = ctypes.POINTER(ctypes.c_void_p)()
        n = ctypes.c_int64(0)
        st = _lib.predict_source(p, path.encode(), ctypes.byref(res), ctypes.byref(n))
        if st != _lib.OK:
            _raise(st)
        taken = 0
        try:
            out = []
            for i in range(n.value):
                r = res[i]  # orig_img: the file, read when first asked for
                out.append(from_c(r, self.names, None, own=True))
                taken += 1
        finally:
            for i in range(taken, n.value):  # the Results own the others
                _lib.result_free(res[i])
            _lib.results_free(res, 0)  # the array alone
        yield from out

    def _predict_array(self, p, img):
        fmt = 1  # BGR
        orig = img
        if not isinstance(img, np.ndarray):
            try:
                from PIL import Image
            except ImportError:
                Image = None
            if Image is not None and isinstance(img, Image.Image):
                arr = np.asarray(img.convert("RGB"))
                fmt = 0
                orig = arr[..., ::-1]  # Ultralytics keeps orig_img as BGR
                img = arr
            else:
                raise TypeError("predict: unsupported source %s (a path, a numpy array HWC uint8 BGR, a PIL.Image "
                                "or a list of these)" % type(img).__name__)
        if img.dtype != np.uint8:
            raise TypeError("predict: a numpy image must be uint8, not %s" % img.dtype)
        if img.ndim == 2:
            img = np.repeat(img[:, :, None], 3, axis=2)
            orig = img
        if img.ndim != 3 or img.shape[2] not in (3, 4):
            raise ValueError("predict: a numpy image must be HxWx3 (BGR), not shape %s" % (img.shape,))
        if img.shape[2] == 4:
            img = img[:, :, :3]
        h, w = img.shape[:2]
        # the rows may be any distance apart; the pixels of a row must be packed BGR bytes
        if not (img.strides[2] == 1 and img.strides[1] == 3 and img.strides[0] >= 3 * w):
            img = np.ascontiguousarray(img)
        out = ctypes.c_void_p()
        st = _lib.predict_image(p, img.ctypes.data, w, h, img.strides[0], fmt, ctypes.byref(out))
        if st != _lib.OK:
            _raise(st)
        try:
            return from_c(out.value, self.names, orig, own=True)
        except BaseException:
            _lib.result_free(out)
            raise

    # ---- train, val, export, info ---------------------------------------
    def add_callback(self, event, fn):
        """Adds fn(trainer_state) for event; supported: on_train_epoch_end,
        on_fit_epoch_end, on_train_end (those the C library raises)."""
        if event not in self._callbacks:
            raise ValueError("add_callback: event %r is not supported; supported events: %s" %
                             (event, ", ".join(CALLBACK_EVENTS)))
        if not callable(fn):
            raise TypeError("add_callback: fn must be callable")
        self._callbacks[event].append(fn)

    def clear_callback(self, event):
        self._callbacks[event] = []

    def run(self, mode, callbacks=False, **keys):
        """yolo_run(mode, task, keys): mode train, val, export, predict or
        info with this model; returns val's metrics as a dict (else {})."""
        d = {"model": self.model}
        d.update(keys)
        task = d.pop("task", None) or self._task
        arr, keep = _keys(d)
        cb = ctypes.c_void_p()
        fns = []
        errors = []
        final = {}
        if callbacks:
            st = _lib.callbacks_new(ctypes.byref(cb))
            if st != _lib.OK:
                _raise(st)

            def make(user_fns):
                def on_event(user, event, epoch, m):
                    try:
                        metrics = _lib.metrics_dict(m)
                        ev = event.decode()
                        if ev == "on_train_end":
                            final.update(metrics)
                        state = TrainerState(self, ev, epoch, metrics)
                        for f in user_fns:
                            f(state)
                    except BaseException as e:  # stop the run; re-raised when yolo_run returns
                        errors.append(e)
                        _lib.train_cancel()
                return _lib.CALLBACK(on_event)

            for ev in CALLBACK_EVENTS:
                if self._callbacks[ev] or ev == "on_train_end":
                    f = make(list(self._callbacks[ev]))
                    fns.append(f)
                    st = _lib.callbacks_add(cb, ev.encode(), f, None)
                    if st != _lib.OK:
                        _lib.callbacks_free(cb)
                        _raise(st)
        m = ctypes.c_void_p()
        try:
            st = _lib.run(mode.encode(), task.encode() if task else None, arr, cb if callbacks else None,
                          ctypes.byref(m))
            if st == _lib.OK:
                res = _lib.metrics_dict(m)
            elif errors:
                raise errors[0]
            elif st == _lib.ERR_INTERRUPTED:
                msg = (_lib.last_error() or b"").decode(errors="replace")
                raise KeyboardInterrupt(msg)
            else:
                _raise(st)
        finally:
            if m:
                _lib.metrics_free(m)
            if callbacks:
                _lib.callbacks_free(cb)
            del keep, fns
        if errors:
            raise errors[0]
        return final if mode == "train" else res

    def train(self, **keys):
        """Trains as `yolo train model=<this model> ...` with the callbacks
        added; returns the final validation's metrics (on_train_end's) as a
        Metrics. Ctrl-C (SIGINT) during training stops it after the current
        step with last.ckpt written and raises KeyboardInterrupt."""
        self._close()
        try:
            d = self.run("train", callbacks=True, **keys)
        finally:
            self.trainer_save_dir = (_lib.last_output() or b"").decode() or None
        # as Ultralytics: the model is the trained one afterwards (best, else last)
        for name in ("best.ckpt", "last.ckpt"):
            weights = os.path.join(self.trainer_save_dir or "", "weights", name)
            if self.trainer_save_dir and os.path.isfile(weights):
                self.model = weights
                self._open({})  # its names and task
                break
        self.metrics = Metrics(d)
        return self.metrics

    def val(self, **keys):
        """Validates as `yolo val model=<this model> ...`; returns a Metrics."""
        self.metrics = Metrics(self.run("val", **keys))
        return self.metrics

    def export(self, format="onnx", **keys):
        """Exports as `yolo export model=<this model> format=...` and returns
        the path written (beside the model; a yaml model: in the current folder)."""
        self.run("export", format=format, **keys)
        return _lib.last_output().decode()  # the C library's name for it

    def fuse(self):
        """Folds every Conv's batch norm into its convolution (Ultralytics'
        model.fuse()): the predictions stay the same to float rounding."""
        st = _lib.predictor_fuse(self._open(self._predictor_keys or {}))
        if st != _lib.OK:
            _raise(st)
        self._fused = True
        return self

    def info(self, **keys):
        """Prints the model summary as `yolo info` does."""
        self.run("info", **keys)
