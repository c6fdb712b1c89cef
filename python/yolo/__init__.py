"""yolo: the Python interface of the yolo C library (libyolo.so), in the
manner of Ultralytics' `from ultralytics import YOLO`.

    from yolo import YOLO
    model = YOLO("yolov8n.pt")
    results = model("bus.jpg")            # or a numpy BGR image, a PIL image, a list
    print(results[0].boxes.xyxy)
    model.train(data="coco8.yaml", epochs=3)
    metrics = model.val()
"""
from ._lib import path as library_path
from .model import CALLBACK_EVENTS, YOLO, Metrics, YOLOError
from .results import Boxes, Masks, Probs, Results

__version__ = "0.1.0"
__all__ = ["YOLO", "YOLOError", "Metrics", "Results", "Boxes", "Masks", "Probs", "CALLBACK_EVENTS", "library_path"]
