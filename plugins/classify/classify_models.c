/* The classify plugin's embedded model yamls (see classify_modules.h). */
#include "classify_modules.h"

/* Ultralytics' ultralytics/cfg/models/v8/yolov8-cls.yaml (same layers and
 * scales; no SPPF). model=yolov8n-cls.yaml selects scale n. */
static const char yolov8_cls_yaml[] =
    "# YOLOv8-cls image classification model with ResNet18-like backbone\n"
    "# YOLOv8n-cls (nc 1000): 2,719,288 parameters, 4.4 GFLOPs at 640 (2,715,880 and 4.3 fused)\n"
    "nc: 1000 # number of classes\n"
    "scales: # [depth, width, max_channels]; model=yolov8n-cls.yaml uses scale n\n"
    "  n: [0.33, 0.25, 1024]\n"
    "  s: [0.33, 0.50, 1024]\n"
    "  m: [0.67, 0.75, 1024]\n"
    "  l: [1.00, 1.00, 1024]\n"
    "  x: [1.00, 1.25, 1024]\n"
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
    "\n"
    "head:\n"
    "  - [-1, 1, Classify, [nc]] # Classify\n";

const char *const classify_model_yaml_names[CLASSIFY_N_MODEL_YAMLS] = {"yolov8-cls.yaml", CLASSIFY_MODEL_YAML_NAMES};
const char *const classify_model_yaml_texts[CLASSIFY_N_MODEL_YAMLS] = {yolov8_cls_yaml, CLASSIFY_MODEL_YAML_TEXTS};
