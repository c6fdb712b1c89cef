/* pt_import.h — Ultralytics .pt checkpoints (torch.save of a dict) read
 * without Python.
 *
 * A .pt is a zip: <top>/data.pkl (a protocol-2 pickle, read by pickle.c,
 * nothing executed), <top>/data/<key> (raw little-endian storages) and
 * <top>/version. The checkpoint dict holds the model object under `model`
 * (final best.pt/last.pt, fp16) or, mid-training, `model` is None and the
 * weights are the `ema` object's. From that object this reads:
 *   - the architecture: its `yaml` dict (the model yaml as Ultralytics
 *     loaded it) turned back into yaml text for the ordinary model builder;
 *   - the state dict: parameters and buffers named as PyTorch names them
 *     ("model.22.cv2.0.0.conv.weight"), walking `_modules` in order,
 *     promoted to f32 as `.float()` does; num_batches_tracked is counted,
 *     not kept (our batch norms do not track it);
 *   - class names (`names`), the head's module class (the yaml's last row);
 *   - the class of every module's `act` (the activation a Conv runs), which
 *     the yaml alone does not fix: Ultralytics' releases from January to
 *     September 2026 built a bare SPPF row with an unactivated cv1, and
 *     such a file's row is written out in full (SPPF's 8.4 form) so the
 *     builder makes what the file holds; the model loader then checks every
 *     Conv's activation against the file's (pt_model.c).
 * Nothing a file declares is allocated before it is bounded (issue 41):
 * the pickle's values and views (pickle.c), the zip's declared sizes
 * against the file's, the storages read, the tensors' elements against
 * those storages and the module walk (pt_import.c), the yaml text
 * (pt_yaml.c); only the storages the model reads are inflated.
 * Errors name the file and what was found. */
#ifndef YOLO_INTEROP_PT_IMPORT_H
#define YOLO_INTEROP_PT_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

#define YOLO_PT_MAX_DIMS 8

typedef struct yolo_pt_tensor {
    char *name;
    int ndim;
    int64_t shape[YOLO_PT_MAX_DIMS];
    int64_t numel;
    float *data;             /* NULL after yolo_pt_read_header_memory */
} yolo_pt_tensor;

/* The activation module of a Conv-like module, as the pickle holds it. */
typedef struct yolo_pt_act {
    char *module; /* "model.9.cv1": the module whose `act` child it is */
    char cls[64]; /* its class: "SiLU", "Identity", "ReLU", ... (the last part of the dotted name) */
} yolo_pt_act;

typedef struct yolo_pt_model {
    char *path;
    char *yaml_text;         /* the architecture as a model yaml */
    size_t yaml_len;
    char yaml_file[256];     /* "yolov8n.yaml" as Ultralytics recorded it ("" if absent) */
    char scale[16];          /* "n" ("" if absent) */
    char head[64];           /* the last layer's module: "Detect", "Segment", "Classify", ... */
    int nc;
    char **names;            /* nc entries when the file has them, else NULL */
    int n_names;
    yolo_pt_tensor *tensors; /* state-dict order */
    int n_tensors;
    yolo_pt_act *acts;       /* module order */
    int n_acts, cap_acts;
    int n_batches_tracked;   /* num_batches_tracked buffers seen (and dropped) */
    double bn_eps;           /* the BatchNorm2d modules' eps and momentum (0: none seen); */
    double bn_momentum;      /* Ultralytics' detect/segment use 1e-3/0.03, classify PyTorch's 1e-5/0.1 */
    bool from_ema;           /* the mid-training form: weights from `ema` */
    int64_t epoch;           /* the checkpoint's `epoch` (-1 when final) */
    char version[32];        /* Ultralytics version that wrote it ("" if absent) */
    /* the train_args Model.val/predict/export take from a checkpoint (Ultralytics'
     * _reset_ckpt_args), as args.yaml texts ("" if absent): imgsz, data, single_cls */
    char train_imgsz[32], train_data[512], train_single_cls[8];
} yolo_pt_model;

/* Whether `path` names a PyTorch checkpoint (ends in ".pt" or ".pth"). */
bool yolo_pt_is_path(const char *path);
/* For a .pt that cannot be opened (errno_value): a bare name such as
 * "yolov8n.pt", which Ultralytics downloads, gets a sentence saying this
 * build reads local files only; anything else "". */
const char *yolo_pt_missing_hint(const char *path, int errno_value);

yolo_status yolo_pt_read(const char *path, yolo_pt_model **out);
/* The same from the file's bytes; `name` stands for the path in messages. */
yolo_status yolo_pt_read_memory(const void *data, size_t size, const char *name, yolo_pt_model **out);
/* The pickle alone (task, names, yaml, train args, acts): the storages are
 * not read and every tensor's `data` is NULL (its name and shape are set).
 * For what needs no weights: the CLI's task, a fine-tune's default args. */
yolo_status yolo_pt_read_header_memory(const void *data, size_t size, const char *name, yolo_pt_model **out);
void yolo_pt_free(yolo_pt_model *pt);

/* The tensor of that state-dict name, NULL if absent. */
const yolo_pt_tensor *yolo_pt_find(const yolo_pt_model *pt, const char *name);
/* The class of `module`'s act ("model.9.cv1"), NULL if it has none. */
const char *yolo_pt_act_of(const yolo_pt_model *pt, const char *module);

#endif
