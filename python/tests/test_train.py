"""train / val / export / info through the Python package, callbacks, errors,
Ctrl-C, and a run from Python equal to the same run from the CLI."""
import csv
import os
import shutil
import signal
import subprocess
import zipfile

import numpy as np
import pytest

from yolo import YOLO, YOLOError

TINY = dict(data="shapes", imgsz=64, epochs=1, fraction=0.25, workers=0, seed=0, plots=False)


def _cli():
    lib = os.environ.get("YOLO_LIBRARY")
    cand = [os.environ.get("YOLO_CLI")]
    if lib:
        cand.append(os.path.join(os.path.dirname(os.path.dirname(lib)), "bin", "yolo"))
    cand.append(shutil.which("yolo"))
    for c in cand:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    pytest.skip("the yolo executable was not found (set YOLO_CLI)")


def test_train_callbacks_val_export(tmp_path):
    model = YOLO("yolov8n.yaml")
    calls = {"on_train_epoch_end": [], "on_fit_epoch_end": [], "on_train_end": []}
    for ev in calls:
        model.add_callback(ev, lambda t, ev=ev: calls[ev].append((t.epoch, dict(t.metrics))))
    with pytest.raises(ValueError, match="on_train_epoch_end, on_fit_epoch_end, on_train_end"):
        model.add_callback("on_pretrain_routine_start", print)
    m = model.train(project=str(tmp_path), name="py", **TINY)
    assert [e for e, _ in calls["on_train_epoch_end"]] == [0]
    assert [e for e, _ in calls["on_fit_epoch_end"]] == [0] and len(calls["on_train_end"]) == 1
    assert "train/box_loss" in calls["on_train_epoch_end"][0][1]
    assert "fitness" in calls["on_fit_epoch_end"][0][1] and "metrics/mAP50(B)" in calls["on_fit_epoch_end"][0][1]
    assert m.box.map50 is not None and 0 <= m.box.map <= 1 and "fitness" in m.results_dict
    last = tmp_path / "py" / "weights" / "last.ckpt"
    assert last.exists()
    # as Ultralytics, the model is the trained one afterwards
    assert model.trainer_save_dir == str(tmp_path / "py")
    assert model.model == str(tmp_path / "py" / "weights" / "best.ckpt")
    assert model.names == {0: "circle", 1: "rectangle", 2: "triangle"}
    trained = YOLO(str(last))
    assert trained.names == {0: "circle", 1: "rectangle", 2: "triangle"}
    v = trained.val(data="shapes", imgsz=64, fraction=0.25, project=str(tmp_path), name="val", plots=False,
                    verbose=False)
    assert 0 <= v.box.map50 <= 1 and 0 <= v.box.map <= 1 and v.top1 is None
    assert v.results_dict["metrics/mAP50-95(B)"] == v.box.map
    out = trained.export(format="onnx", imgsz=64)
    assert out == str(tmp_path / "py" / "weights" / "last.onnx") and os.path.getsize(out) > 1000
    with pytest.raises(YOLOError, match="tflite"):
        trained.export(format="tflite")
    model.info()  # of best.ckpt, as `yolo info model=best.ckpt`


def test_key_errors(tmp_path):
    model = YOLO("yolov8n.yaml")
    with pytest.raises(YOLOError, match="imgsz") as e:
        model.train(project=str(tmp_path), **dict(TINY, imgsz="big"))
    assert e.value.status_name and "big" in str(e.value)
    with pytest.raises(YOLOError, match="not_a_key"):
        model.val(data="shapes", not_a_key=3)
    with pytest.raises(YOLOError, match="epochs"):
        model.train(project=str(tmp_path), **dict(TINY, epochs=-3))


def test_callback_exception_stops_training(tmp_path):
    model = YOLO("yolov8n.yaml")

    def boom(t):
        raise ZeroDivisionError("from a callback")

    model.add_callback("on_train_epoch_end", boom)
    with pytest.raises(ZeroDivisionError):
        model.train(project=str(tmp_path), name="boom", **dict(TINY, epochs=3))
    assert (tmp_path / "boom" / "weights" / "last.ckpt").exists()


def test_sigint_stops_between_steps(tmp_path):
    """A SIGINT during training (here raised from a callback, as Ctrl-C would
    arrive) stops it after the current step: KeyboardInterrupt, a valid last.ckpt."""
    model = YOLO("yolov8n.yaml")
    seen = []

    def interrupt(t):
        seen.append(t.epoch)
        if t.epoch == 0:
            os.kill(os.getpid(), signal.SIGINT)

    model.add_callback("on_fit_epoch_end", interrupt)
    with pytest.raises(KeyboardInterrupt):
        model.train(project=str(tmp_path), name="int", **dict(TINY, epochs=3))
    assert seen == [0] or seen == [0, 1]
    last = tmp_path / "int" / "weights" / "last.ckpt"
    v = YOLO(str(last)).val(data="shapes", imgsz=64, fraction=0.25, project=str(tmp_path), name="v", plots=False,
                            verbose=False)
    assert 0 <= v.box.map <= 1
    # Python's own SIGINT handling is back
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _rows(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.pop("time", None)
    return rows


def test_python_and_cli_train_identical(tmp_path):
    cli = _cli()
    keys = dict(TINY, project=str(tmp_path))
    YOLO("yolov8n.yaml").train(name="py", **keys)
    args = ["%s=%s" % (k, v) for k, v in dict(keys, name="cli", model="yolov8n.yaml").items()]
    subprocess.run([cli, "train"] + args, check=True, stdout=subprocess.DEVNULL)
    py, cl = tmp_path / "py", tmp_path / "cli"
    assert _rows(py / "results.csv") == _rows(cl / "results.csv")
    for w in ("last.ckpt", "best.ckpt"):
        a, b = zipfile.ZipFile(py / "weights" / w), zipfile.ZipFile(cl / "weights" / w)
        assert a.namelist() == b.namelist()
        for n in a.namelist():
            if n.endswith(".safetensors"):  # meta.yaml differs by its date and name
                assert a.read(n) == b.read(n), "%s: %s differs" % (w, n)


def test_ctrl_c_from_outside(tmp_path):
    """Ctrl-C as a terminal sends it: SIGINT from another process while the
    C code trains. The child's train() raises KeyboardInterrupt, last.ckpt is valid."""
    import sys
    import textwrap
    import time
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent("""
        import sys
        from yolo import YOLO
        m = YOLO("yolov8n.yaml")
        m.add_callback("on_train_epoch_end", lambda t: (print("EPOCH", t.epoch, flush=True)))
        try:
            m.train(data="shapes", imgsz=64, epochs=200, fraction=0.25, workers=0, seed=0, plots=False,
                    val=False, project=sys.argv[1], name="c")
        except KeyboardInterrupt as e:
            print("INTERRUPTED", e, flush=True)
            sys.exit(3)
        print("FINISHED", flush=True)
    """))
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True)
    try:
        for line in p.stdout:
            if line.startswith("EPOCH"):
                time.sleep(0.05)  # inside the next epoch's steps
                p.send_signal(signal.SIGINT)
                break
        rest = p.stdout.read()
        rc = p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 3 and "INTERRUPTED" in rest and "FINISHED" not in rest, rest[-2000:]
    last = tmp_path / "c" / "weights" / "last.ckpt"
    v = YOLO(str(last)).val(data="shapes", imgsz=64, project=str(tmp_path), name="v", plots=False, verbose=False)
    assert 0 <= v.box.map <= 1
