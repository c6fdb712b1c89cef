/* yolo/model.h — models built from Ultralytics-format model yamls.
 *
 * A model yaml lists layers as [from, repeats, module, args]. Each module
 * name resolves to a `yolo_module_type`: the core registers Conv,
 * Bottleneck, C2f, C3, SPPF, nn.Upsample and Concat; task plugins register
 * their heads (Detect, Segment, Classify, ...) through the `modules` field
 * of their task table (yolo/plugin.h).
 *
 * A module type has two jobs:
 *   build    reads its yaml args (yolo_module_arg_*), creates its persistent
 *            parameters (yolo_module_param or the block helpers below, named
 *            as Ultralytics' state dict: "model.2.m.0.cv1.conv.weight") and
 *            states its output channel count;
 *   forward  emits its computation into a yolo_graph for one input shape.
 * Optionally `finalize` runs once the strides of every layer are known
 * (Detect's bias initialisation) and `destroy` frees the module's own
 * resources.
 *
 *     yolo_model *m;
 *     yolo_model_options opt = {.seed = 0};  // heads: from the loaded plugins
 *     yolo_model_load("yolov8n.yaml", backend, &opt, &m);  // yolov8.yaml, scale n
 *     yolo_model_outputs out;
 *     yolo_model_forward(m, graph, images, true, &out);      // head outputs
 *
 * Parameters are f32 persistent tensors on the model's backend, initialised
 * as PyTorch does by default (conv/linear weights Kaiming-uniform with
 * a = sqrt(5), biases uniform in +-1/sqrt(fan_in), batch-norm gamma 1,
 * beta 0, running mean 0, running var 1) from the Philox stream keyed by
 * (seed, YOLO_RNG_INIT, 0, parameter number). Batch norm uses eps 1e-3 and
 * momentum 0.03 (Ultralytics' values). */
#ifndef YOLO_MODEL_H
#define YOLO_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "yolo/export.h"
#include "yolo/graph.h"
#include "yolo/plugin.h"
#include "yolo/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define YOLO_BN_EPS 1e-3f
#define YOLO_BN_MOMENTUM 0.03f
#define YOLO_MODULE_MAX_OUTPUTS 16
#define YOLO_MODULE_MAX_INPUTS 8
#define YOLO_AUTOPAD (-1)

typedef struct yolo_model yolo_model;
typedef struct yolo_module_ctx yolo_module_ctx; /* build-time view of one layer (opaque) */

/* ---- activations ---- */
typedef enum yolo_act {
    YOLO_ACT_DEFAULT = 0, /* the model's default: SiLU, or the yaml's `activation:` */
    YOLO_ACT_SILU,
    YOLO_ACT_RELU,
    YOLO_ACT_SIGMOID,
    YOLO_ACT_IDENTITY,
    YOLO_ACT_HARDSWISH, /* x * relu6(x + 3) / 6 (nn.Hardswish; Ultralytics' DPU recipe) */
} yolo_act;
/* "SiLU", "ReLU", ... (static storage). */
YOLO_API const char *yolo_act_name(yolo_act act);
/* Applies act (never YOLO_ACT_DEFAULT: resolve it at build time) to x. */
YOLO_API yolo_tensor *yolo_act_apply(yolo_graph *g, yolo_act act, yolo_tensor *x);

/* ---- yaml arguments ---- */
typedef enum yolo_arg_kind {
    YOLO_ARG_NULL = 0, /* None, null, ~ */
    YOLO_ARG_BOOL,
    YOLO_ARG_INT,
    YOLO_ARG_FLOAT,
    YOLO_ARG_STRING,   /* any other scalar, e.g. "nearest" */
    YOLO_ARG_ACT,      /* nn.ReLU(), nn.SiLU(), nn.Identity(), nn.Sigmoid() */
    YOLO_ARG_LIST,     /* a flow sequence of scalars, e.g. [3, 3] */
} yolo_arg_kind;

typedef struct yolo_arg {
    yolo_arg_kind kind;
    bool b;
    int64_t i;
    double f;
    yolo_act act;
    const char *s;              /* the scalar's text (every kind but LIST) */
    const struct yolo_arg *items; /* LIST */
    int n_items;
    int line, column;           /* 1-based position in the yaml */
} yolo_arg;

/* ---- outputs of a module or of the model ---- */
typedef struct yolo_module_outputs {
    int n;
    yolo_tensor *t[YOLO_MODULE_MAX_OUTPUTS];
} yolo_module_outputs;
typedef yolo_module_outputs yolo_model_outputs;

/* What a forward builder sees. */
typedef struct yolo_forward_ctx {
    yolo_graph *graph;
    bool training;         /* batch statistics in BN; heads return raw maps */
    const yolo_model *model;
    /* (ABI 1.5) eval for inference only (predict, `yolo val`): no caller
     * reads the training-layout outputs that follow a head's eval output
     * (validation losses), so a head may leave them out and skip what only
     * they need (Detect: the one-to-many branch of an end2end model). */
    bool inference;
} yolo_forward_ctx;

/* ---- module types ---- */
typedef struct yolo_module_type {
    const char *name;    /* as written in the yaml: "Conv", "nn.Upsample", "Detect" */
    const char *summary; /* one line for listings */
    /* Reads the args, creates parameters, sets the output channels. Errors
     * name the yaml file and line (yolo_module_error does that). */
    yolo_status (*build)(yolo_module_ctx *ctx);
    /* Emits the forward of the module whose state build allocated. in[i] is
     * the output of the i-th `from` entry. Writes at least one output. */
    yolo_status (*forward)(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                           yolo_module_outputs *out);
    /* Optional: called after the probe pass has measured the strides. */
    yolo_status (*finalize)(yolo_module_ctx *ctx, void *state);
    /* Optional: frees what the module created outside yolo_module_* helpers. */
    void (*destroy)(void *state);
    /* Bit set of YOLO_MODULE_* flags. */
    unsigned flags;
} yolo_module_type;

/* The yaml repeat count goes into the module (C2f, C3) instead of stacking
 * `repeats` copies of it (every other module). */
#define YOLO_MODULE_REPEATS_INSIDE 1u
/* A model holding this module builds its heads in their current form, not
 * the legacy (YOLOv8) one: Ultralytics' parse_model sets legacy=False when it
 * meets C3k2 (YOLO11), and Detect's class branch then starts with depthwise
 * convs. Heads ask yolo_module_legacy_heads. */
#define YOLO_MODULE_CURRENT_HEADS 2u
/* (ABI 1.5) A head of this type is always end2end (YOLOv10's v10Detect, an
 * Ultralytics class whose end2end is fixed): the model's end2end is on as
 * if its yaml said `end2end: True`. With YOLO_MODULE_CURRENT_HEADS on the
 * head itself, the head takes its current form whatever precedes it. */
#define YOLO_MODULE_END2END 4u

/* ---- build context: what build and finalize may ask ---- */
/* Zeroed module state of `size` bytes owned by the model (freed with it);
 * the same pointer is given to forward/finalize/destroy. */
YOLO_API void *yolo_module_state_alloc(yolo_module_ctx *ctx, size_t size);
YOLO_API void *yolo_module_state(yolo_module_ctx *ctx);

YOLO_API int yolo_module_index(const yolo_module_ctx *ctx);       /* layer number in the yaml */
YOLO_API const char *yolo_module_prefix(const yolo_module_ctx *ctx); /* "model.22" (or "model.3.1" for stacked copies) */
YOLO_API int yolo_module_n_inputs(const yolo_module_ctx *ctx);
YOLO_API int yolo_module_in_channels(const yolo_module_ctx *ctx, int i);
/* Stride of input i relative to the image (finalize only; 0 before). */
YOLO_API int yolo_module_in_stride(const yolo_module_ctx *ctx, int i);
YOLO_API int yolo_module_nc(const yolo_module_ctx *ctx);
/* True unless an earlier layer's type, or the module's own, has
 * YOLO_MODULE_CURRENT_HEADS (YOLOv8 and YOLOv5 yamls: legacy heads; YOLO11:
 * current ones; v10Detect: current ones always). */
YOLO_API bool yolo_module_legacy_heads(const yolo_module_ctx *ctx);
/* The model yaml's reg_max (Ultralytics 8.4; 16 when absent, YOLO26's 1:
 * boxes regressed as raw distances without DFL) and end2end (YOLO26's
 * one-to-one head beside the one-to-many one; also on for a model whose
 * head type has YOLO_MODULE_END2END). */
YOLO_API int yolo_module_reg_max(const yolo_module_ctx *ctx);
YOLO_API bool yolo_module_end2end(const yolo_module_ctx *ctx);
/* The scaled repeat count for YOLO_MODULE_REPEATS_INSIDE modules (1 otherwise). */
YOLO_API int yolo_module_repeats(const yolo_module_ctx *ctx);
/* Ultralytics' width rule: ceil(min(c, max_channels) * width / 8) * 8,
 * except that c == nc is left alone. */
YOLO_API int yolo_module_scale_channels(const yolo_module_ctx *ctx, int c);
/* The same without the nc exception (Segment's prototype count). */
YOLO_API int yolo_module_scale_width(const yolo_module_ctx *ctx, int c);
YOLO_API void yolo_module_set_out_channels(yolo_module_ctx *ctx, int c);
/* The resolved arguments shown in the layer table, e.g. "[3, 16, 3, 2]". */
YOLO_API void yolo_module_set_args_text(yolo_module_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Number of torch leaf modules this module adds to the "layers" count that
 * Ultralytics prints (the block helpers count their own). */
YOLO_API void yolo_module_add_leaves(yolo_module_ctx *ctx, int n);

/* Sets an error that names the yaml file, the layer's line and the module,
 * and returns status. */
YOLO_API yolo_status yolo_module_error(const yolo_module_ctx *ctx, yolo_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Arguments: index i of the yaml args list (the input channels are not in it). */
YOLO_API int yolo_module_arg_count(const yolo_module_ctx *ctx);
YOLO_API const yolo_arg *yolo_module_arg(const yolo_module_ctx *ctx, int i); /* NULL past the end */
/* Typed reads: a missing argument (or None for ints) gives `def`; a wrong
 * kind is an error naming file, line, module and argument. */
YOLO_API yolo_status yolo_module_arg_int(const yolo_module_ctx *ctx, int i, int64_t def, int64_t *out);
YOLO_API yolo_status yolo_module_arg_bool(const yolo_module_ctx *ctx, int i, bool def, bool *out);
YOLO_API yolo_status yolo_module_arg_float(const yolo_module_ctx *ctx, int i, double def, double *out);
/* Conv's act argument: True/missing -> YOLO_ACT_DEFAULT, False -> identity, nn.X() -> X. */
YOLO_API yolo_status yolo_module_arg_act(const yolo_module_ctx *ctx, int i, yolo_act *out);
/* YOLO_ACT_DEFAULT resolved to the model's default activation. */
YOLO_API yolo_act yolo_module_resolve_act(const yolo_module_ctx *ctx, yolo_act act);

/* ---- parameters ---- */
typedef enum yolo_param_role {
    YOLO_PARAM_WEIGHT = 0, /* conv/linear weight: weight decay applies */
    YOLO_PARAM_NORM_WEIGHT, /* batch-norm gamma: no decay */
    YOLO_PARAM_BIAS,       /* conv/linear bias, batch-norm beta: no decay */
    YOLO_PARAM_BUFFER,     /* running statistics: not a parameter, no gradient */
} yolo_param_role;

typedef enum yolo_param_init {
    YOLO_INIT_ZERO = 0,
    YOLO_INIT_ONE,
    YOLO_INIT_CONSTANT,         /* value */
    YOLO_INIT_UNIFORM,          /* uniform in [-value, value) */
    YOLO_INIT_KAIMING_UNIFORM,  /* PyTorch's conv/linear default, value = fan_in */
    YOLO_INIT_TRUNC_NORMAL,     /* normal with std value, redrawn outside [-2, 2] (PyTorch's trunc_normal_) */
} yolo_param_init;

/* A persistent f32 tensor named "<prefix>.<name>" registered with the model.
 * trainable sets requires_grad (a frozen parameter still counts as a
 * parameter; a BUFFER never has a gradient). NULL on failure (error set). */
YOLO_API yolo_tensor *yolo_module_param(yolo_module_ctx *ctx, const char *name, int ndim, const int64_t *shape,
                               yolo_param_role role, bool trainable, yolo_param_init init, double value);

/* ---- blocks shared by modules and plugins ---- */
/* Ultralytics Conv: conv (no bias, padding k//2 or as given) -> BN -> act.
 * After yolo_model_fuse, `bias` holds the folded BN and the bn_* are NULL. */
typedef struct yolo_conv_block {
    int c1, c2, k, s, p, g, d;
    yolo_act act;      /* resolved (never DEFAULT) */
    yolo_tensor *weight;                           /* [c2, c1/g, k, k] */
    yolo_tensor *bn_weight, *bn_bias, *bn_mean, *bn_var;
    yolo_tensor *bias; /* NULL until fused */
} yolo_conv_block;

/* Builds a Conv under "<prefix>.<name>" ("cv1" gives cv1.conv.weight,
 * cv1.bn.weight, ...). p = YOLO_AUTOPAD for Ultralytics' autopad; g, d >= 1.
 * `b` must live in the module state (the model keeps a pointer for fusing). */
YOLO_API yolo_status yolo_conv_block_init(yolo_module_ctx *ctx, yolo_conv_block *b, const char *name, int c1, int c2, int k,
                                 int s, int p, int g, int d, yolo_act act);
YOLO_API yolo_tensor *yolo_conv_block_forward(const yolo_forward_ctx *f, const yolo_conv_block *b, yolo_tensor *x);

/* Plain nn.Conv2d (optionally with bias; Kaiming-uniform init). */
typedef struct yolo_conv_layer {
    int c1, c2, k, s, p, g;
    yolo_tensor *weight, *bias;
} yolo_conv_layer;
YOLO_API yolo_status yolo_conv_layer_init(yolo_module_ctx *ctx, yolo_conv_layer *l, const char *name, int c1, int c2, int k,
                                 int s, int p, int g, bool bias, bool trainable);
YOLO_API yolo_tensor *yolo_conv_layer_forward(const yolo_forward_ctx *f, const yolo_conv_layer *l, yolo_tensor *x);

/* nn.ConvTranspose2d (weight [c1, c2, k, k], optional bias). */
YOLO_API yolo_status yolo_conv_transpose_layer_init(yolo_module_ctx *ctx, yolo_conv_layer *l, const char *name, int c1,
                                           int c2, int k, int s, int p, bool bias);
YOLO_API yolo_tensor *yolo_conv_transpose_layer_forward(const yolo_forward_ctx *f, const yolo_conv_layer *l, yolo_tensor *x);

/* nn.Linear (weight [out, in], bias [out]). */
typedef struct yolo_linear_layer {
    int in, out;
    yolo_tensor *weight, *bias;
} yolo_linear_layer;
YOLO_API yolo_status yolo_linear_layer_init(yolo_module_ctx *ctx, yolo_linear_layer *l, const char *name, int in, int out);
YOLO_API yolo_tensor *yolo_linear_layer_forward(const yolo_forward_ctx *f, const yolo_linear_layer *l, yolo_tensor *x);

/* ---- models ---- */
typedef struct yolo_model_options {
    /* Task tables whose modules and embedded yamls the builder may use,
     * searched before the tasks of every plugin loaded so far. */
    const yolo_task *const *tasks;
    int n_tasks;
    int nc;            /* > 0 overrides the yaml's nc */
    int in_channels;   /* > 0 overrides the yaml's ch (default 3) */
    uint64_t seed;     /* parameter initialisation */
    const char *scale; /* overrides the scale letter taken from the file name */
    FILE *log;         /* the layer table while building (NULL: silent) */
} yolo_model_options;

/* Builds a model from `model`: a yaml path, or a name resolved like
 * Ultralytics ("yolov8n-seg.yaml" -> yolov8-seg.yaml with scale n): first
 * as a file (the scale-less name first), then among the tasks' embedded
 * yamls. */
YOLO_API yolo_status yolo_model_load(const char *model, yolo_backend *backend, const yolo_model_options *opt,
                            yolo_model **out);
/* The same from yaml text; `name` is used in messages and for the scale letter. */
YOLO_API yolo_status yolo_model_load_text(const char *name, const char *text, size_t size, yolo_backend *backend,
                                 const yolo_model_options *opt, yolo_model **out);
YOLO_API void yolo_model_free(yolo_model *model);

/* images [N, ch, H, W] f32 in [0,1] (H, W multiples of the max stride).
 * Returns the last layer's outputs (see each head's documentation). */
YOLO_API yolo_status yolo_model_forward(yolo_model *model, yolo_graph *g, yolo_tensor *images, bool training,
                               yolo_model_outputs *out);
/* (ABI 1.5) The eval forward for inference only (yolo_forward_ctx's
 * `inference`): a head's eval output first, the outputs only losses read
 * possibly left out. */
YOLO_API yolo_status yolo_model_forward_inference(yolo_model *model, yolo_graph *g, yolo_tensor *images,
                                                  yolo_model_outputs *out);

/* Folds every Conv's batch norm into its convolution (inference only:
 * every parameter is frozen afterwards, as in Ultralytics' fused model). */
YOLO_API yolo_status yolo_model_fuse(yolo_model *model);
YOLO_API bool yolo_model_is_fused(const yolo_model *model);

/* Tensors: parameters and buffers in creation (state-dict) order
 * (Ultralytics' names; BN's num_batches_tracked is not kept). An optimizer
 * takes the tensors with requires_grad: the DFL weight is a frozen
 * parameter, running statistics are buffers. */
typedef struct yolo_model_tensor {
    yolo_tensor *tensor;
    yolo_param_role role;
    int layer;
} yolo_model_tensor;
YOLO_API int yolo_model_tensor_count(const yolo_model *model);
YOLO_API const yolo_model_tensor *yolo_model_tensor_at(const yolo_model *model, int i);
YOLO_API yolo_tensor *yolo_model_find_tensor(const yolo_model *model, const char *name);

typedef struct yolo_model_info {
    int layers;           /* torch leaf modules, as Ultralytics >= 8.1 counts them */
    int64_t parameters;   /* parameters (not buffers), frozen ones included */
    int64_t gradients;    /* parameters with requires_grad */
    double gflops;        /* at the requested image size, Ultralytics' convention */
} yolo_model_info;
/* Counts as Ultralytics' model.info(). GFLOPs follow its get_flops: thop
 * counts (MACs of conv/linear, 4 per BN element, 1 per upsampled element)
 * times 2, taken at a stride-sized image in eval mode and scaled to imgsz.
 * imgsz <= 0 skips the FLOPs (gflops = 0). */
YOLO_API yolo_status yolo_model_get_info(yolo_model *model, int imgsz, yolo_model_info *info);
/* "YOLOv8n summary: 129 layers, 3,157,200 parameters, 3,157,184 gradients, 8.9 GFLOPs" */
YOLO_API yolo_status yolo_model_print_summary(yolo_model *model, int imgsz, FILE *f);
/* The per-layer table (from, n, params, module, arguments). */
YOLO_API void yolo_model_print_layers(const yolo_model *model, FILE *f);

YOLO_API const char *yolo_model_name(const yolo_model *model);   /* "yolov8n.yaml" as requested */
YOLO_API const char *yolo_model_scale(const yolo_model *model);  /* "n", or "" */
YOLO_API int yolo_model_nc(const yolo_model *model);
YOLO_API int yolo_model_in_channels(const yolo_model *model);
YOLO_API yolo_backend *yolo_model_backend(const yolo_model *model);
YOLO_API int yolo_model_layer_count(const yolo_model *model);
YOLO_API const yolo_module_type *yolo_model_layer_type(const yolo_model *model, int layer);
/* The state of layer `layer` (-1: the last one, i.e. the head). */
YOLO_API void *yolo_model_layer_state(const yolo_model *model, int layer);
/* The yaml's reg_max (16 unless it says otherwise). */
YOLO_API int yolo_model_reg_max(const yolo_model *model);
/* Whether the model has the end2end (one-to-one, NMS-free) head and runs it:
 * the yaml's end2end, unless yolo_model_set_end2end(model, false) switched
 * evaluation to the one-to-many head and NMS (Ultralytics' end2end=False). */
YOLO_API bool yolo_model_end2end(const yolo_model *model);
YOLO_API bool yolo_model_has_end2end_head(const yolo_model *model);
YOLO_API void yolo_model_set_end2end(yolo_model *model, bool on);
/* The head's input strides (e.g. 8, 16, 32); returns their number. */
YOLO_API int yolo_model_strides(const yolo_model *model, int *strides, int max);

#ifdef __cplusplus
}
#endif
#endif
