/* The detect plugin's head modules and model yamls (see detect_modules.h):
 * yolov8.yaml below, the files of plugins/detect/models embedded by cmake. */
#include "detect_modules.h"

const yolo_module_type *const detect_modules[DETECT_N_MODULES] = {&detect_module_type};

/* Ultralytics' ultralytics/cfg/models/v8/yolov8.yaml (same layers and
 * scales). model=yolov8n.yaml selects scale n. */
static const char yolov8_yaml[] =
    "# YOLOv8 object detection model with P3/8 - P5/32 outputs\n"
    "# YOLOv8n: 3,157,200 parameters, 8.9 GFLOPs at 640 (3,151,904 and 8.7 fused)\n"
    "nc: 80 # number of classes\n"
    "scales: # [depth, width, max_channels]; model=yolov8n.yaml uses scale n\n"
    "  n: [0.33, 0.25, 1024]\n"
    "  s: [0.33, 0.50, 1024]\n"
    "  m: [0.67, 0.75, 768]\n"
    "  l: [1.00, 1.00, 512]\n"
    "  x: [1.00, 1.25, 512]\n"
    "\n"
    "backbone:\n"
    "  # [from, repeats, module, args]\n"
    "  - [-1, 1, Conv, [64, 3, 2]] # 0-P1/2\n"
    "  - [-1, 1, Conv, [128, 3, 2]] # 1-P2/4\n"
    "  - [-1, 3, C2f, [128, True]]\n"
    "  - [-1, 1, Conv, [256, 3, 2]] # 3-P3/8\n"
    "  - [-1, 6, C2f, [256, True]]\n"
    "  - [-1, 1, Conv, [512, 3, 2]] # 5-P4/16\n"
    "  - [-1, 6, C2f, [512, True]]\n"
    "  - [-1, 1, Conv, [1024, 3, 2]] # 7-P5/32\n"
    "  - [-1, 3, C2f, [1024, True]]\n"
    "  - [-1, 1, SPPF, [1024, 5]] # 9\n"
    "\n"
    "head:\n"
    "  - [-1, 1, nn.Upsample, [None, 2, \"nearest\"]]\n"
    "  - [[-1, 6], 1, Concat, [1]] # cat backbone P4\n"
    "  - [-1, 3, C2f, [512]] # 12\n"
    "\n"
    "  - [-1, 1, nn.Upsample, [None, 2, \"nearest\"]]\n"
    "  - [[-1, 4], 1, Concat, [1]] # cat backbone P3\n"
    "  - [-1, 3, C2f, [256]] # 15 (P3/8-small)\n"
    "\n"
    "  - [-1, 1, Conv, [256, 3, 2]]\n"
    "  - [[-1, 12], 1, Concat, [1]] # cat head P4\n"
    "  - [-1, 3, C2f, [512]] # 18 (P4/16-medium)\n"
    "\n"
    "  - [-1, 1, Conv, [512, 3, 2]]\n"
    "  - [[-1, 9], 1, Concat, [1]] # cat head P5\n"
    "  - [-1, 3, C2f, [1024]] # 21 (P5/32-large)\n"
    "\n"
    "  - [[15, 18, 21], 1, Detect, [nc]] # Detect(P3, P4, P5)\n";

/* yolov5u.yaml: the name model=yolov5nu.yaml resolves to (Ultralytics' unified
 * name drops the scale letter): YOLOv5's layers with the anchor-free Detect. */
const char *const detect_model_yaml_names[DETECT_N_MODEL_YAMLS] = {"yolov8.yaml", "yolov5u.yaml",
                                                                   DETECT_MODEL_YAML_NAMES};
const char *const detect_model_yaml_texts[DETECT_N_MODEL_YAMLS] = {yolov8_yaml, (const char *)detect_yaml_yolov5,
                                                                   DETECT_MODEL_YAML_TEXTS};
