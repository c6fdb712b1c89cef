/* The core configuration keys: type, range, choices, modes. Defaults and
 * help lines are in default.yaml (a test checks both list the same keys);
 * what reads each key is core/settings/settings_table.c. */
#include "cfg/config_internal.h"
#include "dist/launch.h"
#include "interop/onnx_export.h"

#include <string.h>

#define T YOLO_CONFIG_TRAIN
#define V YOLO_CONFIG_VAL
#define P YOLO_CONFIG_PREDICT
#define ALL YOLO_CONFIG_ALL_MODES
#define N YOLO_CONFIG_NULLABLE
#define R YOLO_CONFIG_RESUMABLE
#define GE YOLO_CONFIG_MIN                       /* >= min */
#define GT (YOLO_CONFIG_MIN | YOLO_CONFIG_MIN_EXCLUSIVE)
#define IN (YOLO_CONFIG_MIN | YOLO_CONFIG_MAX)   /* [min, max] */
#define IN_OPEN_LO (GT | YOLO_CONFIG_MAX)       /* (min, max] */
#define IN_OPEN_HI (IN | YOLO_CONFIG_MAX_EXCLUSIVE) /* [min, max) */

#define B YOLO_CONFIG_BOOL
#define I YOLO_CONFIG_INT
#define F YOLO_CONFIG_FLOAT
#define S YOLO_CONFIG_STRING
#define BS YOLO_CONFIG_BOOL_OR_STRING
#define IL YOLO_CONFIG_INT_LIST
#define NUM YOLO_CONFIG_NUMBER
#define BN YOLO_CONFIG_BOOL_OR_NUMBER

#define KEY(name, type, flags, min, max, choices) {name, type, flags, min, max, choices, NULL, NULL}
#define FRACTION(name, modes) KEY(name, F, (modes) | IN, 0, 1, NULL)

const yolo_config_key yolo_core_keys[] = {
    KEY("task", S, ALL, 0, 0, NULL),
    KEY("mode", S, ALL | R, 0, 0, "train|val|predict|export|info|checks"),
    /* train */
    KEY("model", S, ALL | N | R, 0, 0, NULL),
    KEY("data", S, T | V | N, 0, 0, NULL),
    KEY("epochs", I, T | GE | R, 1, 0, NULL),
    KEY("time", F, T | N | GE, 0, 0, NULL), /* 0 or null: off (Ultralytics' `if self.args.time`) */
    KEY("patience", I, T | GE, 0, 0, NULL),
    KEY("batch", NUM, T | V | P | GE | R, -1, 0, NULL), /* images, or AutoBatch: -1 or a memory fraction (0, 1) */
    /* an integer, or [h, w] for predict and export (16384^2 is past the decoders' pixel limit already) */
    KEY("imgsz", IL, ALL | IN | R, 32, 16384, NULL),
    KEY("save", B, T | P, 0, 0, NULL),
    KEY("save_period", I, T | GE, -1, 0, NULL),
    KEY("cache", BS, T, 0, 0, "ram|disk"),
    KEY("device", S, ALL | N | R, 0, 0, NULL),
    KEY("workers", I, ALL | IN | R, 0, 256, NULL), /* the loader's limit (data/loader.c) */
    KEY("threads", I, ALL | GE | R, 0, 0, NULL),
    KEY("project", S, ALL | N, 0, 0, NULL),
    KEY("name", S, ALL | N, 0, 0, NULL),
    KEY("exist_ok", B, ALL, 0, 0, NULL),
    KEY("pretrained", BS, T, 0, 0, NULL),
    KEY("optimizer", S, T, 0, 0, "SGD|MuSGD|Adam|Adamax|AdamW|NAdam|RAdam|RMSProp|auto"),
    KEY("verbose", B, ALL | R, 0, 0, NULL),
    KEY("seed", I, T | GE, 0, 0, NULL),
    KEY("deterministic", B, T, 0, 0, NULL),
    KEY("single_cls", B, T | V, 0, 0, NULL),
    KEY("rect", B, T | V | P, 0, 0, NULL),
    KEY("cos_lr", B, T, 0, 0, NULL),
    KEY("close_mosaic", I, T | GE, 0, 0, NULL),
    KEY("resume", BS, T | R, 0, 0, NULL),
    KEY("amp", BS, T, 0, 0, "fp16|bf16|fp32"), /* Ultralytics 8.4: True, False or the format */
    KEY("fraction", F, T | IN_OPEN_LO, 0, 1, NULL), /* 0 would train on no image */
    KEY("profile", B, T, 0, 0, NULL),
    KEY("freeze", IL, T | N | GE, 0, 0, NULL),
    /* Ultralytics 8.3's bool (true: sizes in [0.5, 1.5] x imgsz) or 8.4's fraction f: [1 - f, 1 + f] x imgsz */
    KEY("multi_scale", BN, T | IN, 0, 1, NULL),
    KEY("compile", BS, T, 0, 0, NULL),
    KEY("overlap_mask", B, T, 0, 0, NULL),
    KEY("mask_ratio", I, T | GE, 1, 0, NULL),
    FRACTION("dropout", T),
    /* distributed */
    KEY("world", I, T | GE | R, 1, 0, NULL),
    KEY("dist_timeout", F, T | V | GT | R, 0, 0, NULL),
    KEY("dist_bucket_mb", F, T | GT | R, 0, 0, NULL),
    KEY("sync_bn", B, T, 0, 0, NULL),
    /* val */
    KEY("val", B, T, 0, 0, NULL),
    KEY("split", S, V, 0, 0, "val|test|train"),
    KEY("save_json", B, T | V, 0, 0, NULL),
    KEY("conf", F, V | P | N | IN, 0, 1, NULL),
    FRACTION("iou", V | P),
    KEY("max_det", I, V | P | GE, 1, 0, NULL),
    KEY("half", B, V | P, 0, 0, NULL),
    KEY("dnn", B, V | P, 0, 0, NULL),
    KEY("plots", B, T | V, 0, 0, NULL),
    KEY("end2end", B, V | P | N, 0, 0, NULL),
    /* predict */
    KEY("source", S, P | N, 0, 0, NULL),
    KEY("vid_stride", I, P | GE, 1, 0, NULL),
    KEY("stream_buffer", B, P, 0, 0, NULL),
    KEY("visualize", B, V | P, 0, 0, NULL),
    KEY("augment", B, V | P, 0, 0, NULL),
    KEY("agnostic_nms", B, V | P, 0, 0, NULL),
    KEY("classes", IL, V | P | N | GE, 0, 0, NULL),
    KEY("embed", IL, P | N | GE, 0, 0, NULL),
    KEY("show", B, P, 0, 0, NULL),
    KEY("save_frames", B, P, 0, 0, NULL),
    /* export (core/interop/mode_export.c) */
    KEY("format", S, 0, 0, 0, NULL),
    KEY("keras", B, 0, 0, 0, NULL),
    KEY("optimize", B, 0, 0, 0, NULL),
    KEY("int8", B, 0, 0, 0, NULL),
    KEY("dynamic", B, 0, 0, 0, NULL),
    KEY("simplify", B, 0, 0, 0, NULL),
    KEY("opset", I, N | IN, YOLO_ONNX_OPSET_MIN, YOLO_ONNX_OPSET_MAX, NULL),
    KEY("workspace", F, N, 0, 0, NULL),
    KEY("nms", B, 0, 0, 0, NULL),
    KEY("retina_masks", B, P, 0, 0, NULL),
    KEY("save_txt", B, V | P, 0, 0, NULL),
    KEY("save_conf", B, V | P, 0, 0, NULL),
    KEY("save_crop", B, P, 0, 0, NULL),
    KEY("show_labels", B, P, 0, 0, NULL),
    KEY("show_conf", B, P, 0, 0, NULL),
    KEY("show_boxes", B, P, 0, 0, NULL),
    KEY("line_width", I, P | N | GE, 1, 0, NULL),
    /* hyperparameters */
    FRACTION("lr0", T),
    FRACTION("lrf", T),
    /* Adam's beta1 and SGD's momentum: 1 never forgets (Adam's bias correction divides by 1 - beta1^t) */
    KEY("momentum", F, T | IN_OPEN_HI, 0, 1, NULL),
    FRACTION("weight_decay", T),
    KEY("warmup_epochs", F, T | GE, 0, 0, NULL),
    KEY("warmup_momentum", F, T | IN_OPEN_HI, 0, 1, NULL),
    FRACTION("warmup_bias_lr", T),
    KEY("box", F, T | GE, 0, 0, NULL),
    KEY("cls", F, T | GE, 0, 0, NULL),
    FRACTION("cls_pw", T), /* Ultralytics asserts 0 <= cls_pw <= 1 */
    KEY("dfl", F, T | GE, 0, 0, NULL),
    FRACTION("label_smoothing", T),
    KEY("nbs", I, T | GE, 1, 0, NULL),
    FRACTION("hsv_h", T),
    FRACTION("hsv_s", T),
    FRACTION("hsv_v", T),
    KEY("degrees", F, T, 0, 0, NULL),
    FRACTION("translate", T),
    FRACTION("scale", T),
    KEY("shear", F, T, 0, 0, NULL),
    FRACTION("perspective", T),
    FRACTION("flipud", T),
    FRACTION("fliplr", T),
    FRACTION("bgr", T),
    FRACTION("mosaic", T),
    FRACTION("mixup", T),
    FRACTION("cutmix", T),
    FRACTION("copy_paste", T),
    KEY("copy_paste_mode", S, T, 0, 0, "flip|mixup"),
    KEY("auto_augment", S, T | N, 0, 0, "randaugment|autoaugment|augmix"),
    FRACTION("erasing", T),
    KEY("crop_fraction", F, T | V | P | GT | YOLO_CONFIG_MAX, 0, 1, NULL),
    /* custom config */
    KEY("cfg", S, ALL | N, 0, 0, NULL),
    /* tracker */
    KEY("tracker", S, 0, 0, 0, NULL),
};

const int yolo_core_key_count = (int)(sizeof yolo_core_keys / sizeof yolo_core_keys[0]);

/* `where` of the rules a value alone cannot decide */
#define SETTINGS_READER "the settings reader (core/settings/settings_read.c)"

static const yolo_config_rule yolo_core_key_rules[] = {
    {"device", "null (the first GPU, else the CPU), cpu, vulkan (the first GPU), vulkan:N or N (Vulkan device N); a "
               "list N,M,... or vulkan:N,M,... starts one DDP rank per GPU (for N ranks on the CPU: device=cpu "
               "world=N)", yolo_dist_check_device, NULL},
    {"batch", "a whole number of images >= 1 (over all ranks); -1 or 0: AutoBatch at 60% of the device's memory; a "
              "fraction in (0, 1): AutoBatch at that fraction (train only)", NULL, SETTINGS_READER},
    {"imgsz", "a multiple of 32 (of the model's largest stride: 64 for P6 models); [h, w] for predict and export",
     NULL, SETTINGS_READER " and the model's stride check (core/train/session.c)"},
    {"freeze", "N: layers 0..N-1; [i, j, ...]: those layers; every index below the model's layer count", NULL,
     "the trainer once the model is built (core/train/freeze.c)"},
    {"fraction", "train on the first round(n * fraction) images of the sorted train list (Ultralytics' "
                 "im_files[:round(n * fraction)])", NULL, NULL},
    {"time", "null or 0: off; hours otherwise", NULL, NULL},
    {"patience", "0: never stop early", NULL, NULL},
    {"save_period", "-1 or 0: off; N: also weights/epochN.ckpt every N epochs", NULL, NULL},
    {"close_mosaic", "0: never", NULL, NULL},
    {"multi_scale", "false (off), true (0.5) or a fraction f: sizes in [1 - f, 1 + f] x imgsz", NULL, NULL},
    {"threads", "0: one per core", NULL, NULL},
    {"workers", "0: the training thread loads the batches itself", NULL, NULL},
    {"conf", "null: 0.001 in val, 0.25 in predict", NULL, NULL},
    {"opset", "null: 17", NULL, NULL},
};
static const int rule_count = (int)(sizeof yolo_core_key_rules / sizeof yolo_core_key_rules[0]);

const yolo_config_rule *yolo_config_find_rule(const char *key) {
    for (int i = 0; i < rule_count; i++)
        if (strcmp(yolo_core_key_rules[i].key, key) == 0) return &yolo_core_key_rules[i];
    return NULL;
}

const char *const yolo_core_train_only_keys[] = {
    "epochs", "time", "patience", "save_period", "pretrained", "optimizer", "cos_lr", "close_mosaic", "resume",
    "amp", "fraction", "profile", "freeze", "multi_scale", "compile", "cls_pw", "dropout", "sync_bn", "dist_bucket_mb",
    "val", "lr0", "lrf", "momentum", "weight_decay", "warmup_epochs", "warmup_momentum", "warmup_bias_lr", "nbs",
    "label_smoothing", "hsv_h", "hsv_s", "hsv_v", "degrees", "translate", "scale", "shear", "perspective", "flipud",
    "fliplr", "bgr", "mosaic", "mixup", "cutmix", "copy_paste", "copy_paste_mode", "auto_augment", "erasing", NULL};
const char *const yolo_core_predict_only_keys[] = {"source", "save_crop", "show_labels", "show_conf", "show_boxes",
                                                   "line_width", NULL};
const char *const yolo_core_export_only_keys[] = {"format", "keras", "optimize", "int8", "dynamic", "simplify",
                                                  "opset", "workspace", "nms", NULL};

const char *const yolo_core_not_train_keys[] = {"save_txt", "save_conf", "retina_masks", NULL};

const char *const yolo_core_keys_beyond_ultralytics[] = {
    "threads", "world", "dist_timeout", "dist_bucket_mb", "sync_bn", /* this project's own */
    "label_smoothing", "crop_fraction",                             /* dropped by Ultralytics 8.2 and 8.3 */
    "compile", "end2end", "cls_pw",                                  /* added by Ultralytics 8.4; 8.3 refuses them */
    NULL};
