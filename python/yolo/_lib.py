"""Loading libyolo.so and declaring the C host API (sdk/include/yolo/yolo.h).

The library is looked for, in order:
  1. the environment variable YOLO_LIBRARY (a path to libyolo.so);
  2. next to this package: a libyolo.so* copied into the package folder, or
     the path written into _libpath.txt by `cmake --install`;
  3. the build tree this package sits in (<repo>/build*/lib/libyolo.so, the
     most recently built first);
  4. the system loader (ctypes.util.find_library('yolo')).
The task plugins are found by the C library itself: <libdir>/yolo/plugins
next to libyolo.so, and the folders of YOLO_PLUGIN_PATH.

ctypes.CDLL releases the GIL around every foreign call; callbacks from C
(CFUNCTYPE) take it back while Python code runs.
"""
import ctypes
import ctypes.util
import glob
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("YOLO_LIBRARY")
    if env:
        yield env
        return
    for name in sorted(glob.glob(os.path.join(_HERE, "libyolo.so*"))):
        yield name
    txt = os.path.join(_HERE, "_libpath.txt")
    if os.path.exists(txt):
        with open(txt) as f:
            p = f.read().strip()
        if p:
            yield p if os.path.isabs(p) else os.path.normpath(os.path.join(_HERE, p))
    repo = os.path.dirname(os.path.dirname(_HERE))
    built = glob.glob(os.path.join(repo, "build*", "lib", "libyolo.so"))
    for p in sorted(built, key=os.path.getmtime, reverse=True):
        yield p
    found = ctypes.util.find_library("yolo")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("yolo: libyolo.so not found; set YOLO_LIBRARY to its path. Tried: " +
                      ("; ".join(tried) if tried else "nothing (no candidate)"))


lib, path = _load()

c_char_p = ctypes.c_char_p
c_int = ctypes.c_int
c_float = ctypes.c_float
c_double = ctypes.c_double
c_void_p = ctypes.c_void_p
P = ctypes.POINTER

CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_int, c_void_p)


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


last_error = _fn("yolo_last_error", c_char_p)
status_name = _fn("yolo_status_name", c_char_p, c_int)

predictor_open = _fn("yolo_predictor_open", c_int, c_char_p, c_char_p, P(c_char_p), P(c_void_p))
predictor_close = _fn("yolo_predictor_close", None, c_void_p)
predictor_fuse = _fn("yolo_predictor_fuse", c_int, c_void_p)
last_output = _fn("yolo_last_output", c_char_p)
predictor_task = _fn("yolo_predictor_task", c_char_p, c_void_p)
predictor_num_classes = _fn("yolo_predictor_num_classes", c_int, c_void_p)
predictor_class_name = _fn("yolo_predictor_class_name", c_char_p, c_void_p, c_int)
predict_image = _fn("yolo_predict_image", c_int, c_void_p, c_void_p, c_int, c_int, ctypes.c_size_t, c_int,
                    P(c_void_p))
predict_source = _fn("yolo_predict_source", c_int, c_void_p, c_char_p, P(P(c_void_p)), P(ctypes.c_int64))
results_free = _fn("yolo_results_free", None, P(c_void_p), ctypes.c_int64)
result_free = _fn("yolo_result_free", None, c_void_p)
result_path = _fn("yolo_result_path", c_char_p, c_void_p)
result_width = _fn("yolo_result_width", c_int, c_void_p)
result_height = _fn("yolo_result_height", c_int, c_void_p)
result_num_boxes = _fn("yolo_result_num_boxes", c_int, c_void_p)
result_box = _fn("yolo_result_box", c_int, c_void_p, c_int, P(c_float), P(c_float), P(c_int))
result_box_name = _fn("yolo_result_box_name", c_char_p, c_void_p, c_int)
result_mask = _fn("yolo_result_mask", P(ctypes.c_uint8), c_void_p, c_int, P(c_int), P(c_int))
result_letterbox = _fn("yolo_result_letterbox", c_int, c_void_p, P(c_float), P(c_float), P(c_float), P(c_float))
result_speed = _fn("yolo_result_speed", c_int, c_void_p, P(ctypes.c_double), P(ctypes.c_double), P(ctypes.c_double))
result_probs = _fn("yolo_result_probs", P(c_float), c_void_p, P(c_int))
result_top = _fn("yolo_result_top", c_int, c_void_p, P(c_int), c_int)
result_plot = _fn("yolo_result_plot", c_int, c_void_p, c_void_p, c_int, c_int, ctypes.c_size_t, c_int, c_int, c_double,
                  c_void_p, ctypes.c_size_t)
image_read = _fn("yolo_image_read", c_int, c_char_p, c_int, P(P(ctypes.c_uint8)), P(c_int), P(c_int))
image_data_free = _fn("yolo_image_data_free", None, c_void_p)
image_write = _fn("yolo_image_write", c_int, c_char_p, c_void_p, c_int, c_int, ctypes.c_size_t, c_int)

PIXELS_RGB = 0
PIXELS_BGR = 1
PLOT_NO_CONF = 1
PLOT_NO_LABELS = 2
PLOT_NO_BOXES = 4
PLOT_NO_MASKS = 8
PLOT_NO_PROBS = 16

metrics_count = _fn("yolo_metrics_count", c_int, c_void_p)
metrics_name = _fn("yolo_metrics_name", c_char_p, c_void_p, c_int)
metrics_value = _fn("yolo_metrics_value", c_double, c_void_p, c_int)
metrics_free = _fn("yolo_metrics_free", None, c_void_p)
callbacks_new = _fn("yolo_callbacks_new", c_int, P(c_void_p))
callbacks_add = _fn("yolo_callbacks_add", c_int, c_void_p, c_char_p, CALLBACK, c_void_p)
callbacks_free = _fn("yolo_callbacks_free", None, c_void_p)
train_cancel = _fn("yolo_train_cancel", None)
run = _fn("yolo_run", c_int, c_char_p, c_char_p, P(c_char_p), c_void_p, P(c_void_p))

OK = 0
ERR_ARG = 1
ERR_CONFIG = 6
ERR_INTERRUPTED = 10


class Result:
    """Owns a yolo_result* (freed with the object)."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        if self.ptr and result_free is not None:
            result_free(self.ptr)
            self.ptr = None


def metrics_dict(m):
    """A yolo_metrics* as an ordered dict name -> float."""
    if not m:
        return {}
    out = {}
    for i in range(metrics_count(m)):
        out[metrics_name(m, i).decode()] = float(metrics_value(m, i))
    return out
