/* Model internals shared by the .c files of core/nn. */
#ifndef YOLO_NN_MODEL_INTERNAL_H
#define YOLO_NN_MODEL_INTERNAL_H

#include "nn/model_yaml.h"
#include "yolo/model.h"

#define MODEL_NAME_MAX 512

typedef struct model_layer {
    const yolo_module_type *type;
    const model_row *row;          /* in the model's spec */
    int index;
    int from[YOLO_MODULE_MAX_INPUTS]; /* absolute layer numbers, -1 = the images */
    int n_from;
    int repeats;                   /* after the depth rule */
    int n_copies;                  /* stacked copies (repeats, unless REPEATS_INSIDE) */
    void **states;                 /* one per copy */
    int in_channels[YOLO_MODULE_MAX_INPUTS];
    int out_channels;
    int in_strides[YOLO_MODULE_MAX_INPUTS]; /* measured by the probe */
    int out_stride;
    int leaves;                    /* torch leaf modules besides the Conv blocks */
    yolo_arg *args;                /* resolved (nc substituted) */
    char args_text[256];
} model_layer;

struct yolo_module_ctx {
    yolo_model *model;
    model_layer *layer;
    int copy;
    char prefix[64];
    void *state;
    int in_channels[YOLO_MODULE_MAX_INPUTS];
    int n_in;
    int out_channels;
    bool out_set;
};

/* A module's own step of yolo_model_fuse (merging convolutions, as
 * YOLOv10's RepVGGDW), registered at build with model_register_fuse. */
typedef struct model_fuse_step {
    yolo_status (*fuse)(yolo_model *m, void *block);
    void *block;
} model_fuse_step;

typedef struct model_conv_entry {
    yolo_conv_block *block;
    bool own_act_leaf; /* an activation module of its own (explicit act or Identity) */
    int layer;
} model_conv_entry;

struct yolo_model {
    yolo_backend *backend;
    char name[MODEL_NAME_MAX];    /* as requested, e.g. "yolov8n.yaml" */
    char source[MODEL_NAME_MAX];  /* what was read, e.g. "yolov8.yaml (embedded, detect)" */
    char scale[16];
    int nc, ch;
    double depth, width, max_channels;
    yolo_act default_act;
    uint64_t seed;
    int n_params_created;         /* parameter number for the init stream */
    int64_t n_param_elements;     /* their elements, at most YOLO_MODEL_MAX_PARAMS (model_size.h) */
    model_spec spec;
    model_layer *layers;
    int n_layers;
    yolo_model_tensor *tensors;
    int n_tensors, cap_tensors;
    model_conv_entry *convs;
    int n_convs, cap_convs;
    model_fuse_step *fuse_steps; /* run by yolo_model_fuse after the batch-norm fold */
    int n_fuse_steps, cap_fuse_steps;
    void **allocs;                /* module states */
    int n_allocs, cap_allocs;
    int strides[YOLO_MODULE_MAX_INPUTS];
    int n_strides;
    bool fused;
    /* batch norm constants: YOLO_BN_EPS / YOLO_BN_MOMENTUM, or what an
     * imported model was built with (Ultralytics' classify models keep
     * PyTorch's 1e-5 / 0.1) */
    float bn_eps, bn_momentum;
    /* the yaml's end2end head runs unless val/predict/export say end2end=False
     * (yolo_model_set_end2end): Detect then decodes its one-to-many branch */
    bool end2end_off;
    /* RepConv's SiLU is one module shared by all of them: one leaf, counted by the first */
    bool repconv_act_counted;
    char *yaml_text;              /* the yaml it was built from (checkpoints keep it) */
};

/* core/nn/module_api.c */
yolo_status model_register_tensor(yolo_model *m, yolo_tensor *t, yolo_param_role role, int layer);
yolo_status model_register_conv(yolo_module_ctx *ctx, yolo_conv_block *b, bool own_act_leaf);
yolo_status model_register_fuse(yolo_module_ctx *ctx, yolo_status (*fuse)(yolo_model *m, void *block), void *block);
/* Fills t (f32, persistent) from the init stream of parameter `number`. */
yolo_status model_init_tensor(yolo_tensor *t, uint64_t seed, int number, yolo_param_init init, double value);
void model_ctx_setup(yolo_module_ctx *ctx, yolo_model *m, model_layer *layer, int copy);

/* core/nn/modules_core.c: the built-in module types (the CSP family in
 * modules_csp.c, attention in modules_attention.c). */
extern const yolo_module_type *const yolo_core_modules[];
extern const int yolo_core_module_count;
extern const yolo_module_type yolo_bottleneck_type, yolo_c2f_type, yolo_c3_type, yolo_c3k2_type, yolo_c2_type;
extern const yolo_module_type yolo_c2psa_type;
/* PSABlock(c, attn_ratio=0.5, num_heads, shortcut=True) of modules_attention.c:
 * the unit C2PSA chains, and the second half of YOLO26's C3k2 attn units. */
typedef struct psa_block psa_block;
size_t psa_block_size(void);
yolo_status psa_block_init(yolo_module_ctx *ctx, psa_block *b, const char *name, int c, int heads);
yolo_tensor *psa_block_forward(const yolo_forward_ctx *f, const void *block, yolo_tensor *x);
/* Multi-head attention over positions (modules_attention.c), shared by
 * C2PSA's Attention and A2C2f's AAttn: t [B*heads, 2*key_dim + head_dim, N]
 * holds each head's q, k, v; gives v softmax(q^T k * scale)^T [B*heads,
 * head_dim, N], and v itself in *v (both attentions add pe(v)). */
yolo_tensor *attention_heads(yolo_graph *g, yolo_tensor *t, int key_dim, int head_dim, float scale, yolo_tensor **v);
/* C3(c1, c2, n) of modules_csp.c; as C3k(c1, c2, n, shortcut, g) (e 0.5,
 * 3x3 inner kernels) the inner block of C3k2 with c3k and of A2C2f without
 * area attention (modules_area_attention.c). */
typedef struct c3_block c3_block;
size_t c3_block_size(void);
yolo_status c3k_block_init(yolo_module_ctx *ctx, c3_block *b, const char *name, int c1, int c2, int n, bool shortcut,
                           int g);
yolo_tensor *c3_block_forward(const yolo_forward_ctx *f, const c3_block *b, yolo_tensor *x);
/* YOLO12's A2C2f (area attention), in modules_area_attention.c. */
extern const yolo_module_type yolo_a2c2f_type;
/* YOLOv9's GELAN modules, in modules_gelan.c. */
extern const yolo_module_type yolo_repncspelan4_type, yolo_elan1_type, yolo_aconv_type, yolo_adown_type,
    yolo_sppelan_type;
/* YOLOv10's modules: SCDown and CIB(c1, c2, shortcut, e, lk), the inner
 * block of C2fCIB (modules_csp.c), in modules_yolov10.c; PSA in
 * modules_attention.c. */
extern const yolo_module_type yolo_scdown_type, yolo_psa_type, yolo_c2fcib_type;
typedef struct cib_block cib_block;
size_t cib_block_size(void);
yolo_status cib_block_init(yolo_module_ctx *ctx, cib_block *b, const char *name, int c1, int c2, bool shortcut,
                           double e, bool lk);
yolo_tensor *cib_block_forward(const yolo_forward_ctx *f, const void *block, yolo_tensor *x);
/* core/nn/model_fuse.c, for the re-parameterised blocks' fuse steps
 * (YOLOv10's RepVGGDW, YOLOv9's RepConv), after the batch-norm fold:
 * big(x) + small(x) as one convolution. small's kernel is added at the
 * centre of big's (odd sizes, same filters; their paddings keep them
 * aligned) and its bias to big's; small leaves the model (its tensors
 * freed, its weight and bias NULL) and big is counted as the bare
 * nn.Conv2d Ultralytics keeps (no Identity leaf). */
yolo_status model_merge_centred_conv(yolo_model *m, yolo_conv_block *big, yolo_conv_block *small);

/* core/nn/module_args.c: helpers of the core module types. */
/* ", a, b, c" for the yaml args from `start` on (empty if none). */
const char *module_args_tail(const yolo_module_ctx *ctx, int start, char *buf, size_t size);
/* c2 from args[0], scaled by the width rule. */
yolo_status module_out_channels_arg(yolo_module_ctx *ctx, int *c2);
yolo_status module_single_input(yolo_module_ctx *ctx, int *c1);
yolo_status module_one_output(yolo_module_outputs *out, yolo_tensor *y);
/* Zeroed memory owned by the model that does not replace the module's state. */
void *module_alloc(yolo_module_ctx *ctx, size_t size);
/* The layer table's "[c1, c2, n, args from tail_from...]" and the output channels c2. */
/* A Conv named "<name>.<leaf>" (leaf alone for an empty name): stride s,
 * padding p (YOLO_AUTOPAD: Ultralytics' autopad), g groups. */
yolo_status module_conv_at(yolo_module_ctx *ctx, yolo_conv_block *b, const char *name, const char *leaf, int c1, int c2,
                           int k, int s, int p, int g, yolo_act act);
yolo_status module_finish_repeated(yolo_module_ctx *ctx, int c1, int c2, int n, int tail_from);
/* cv1(x) split in two halves along channels; half `half` goes through n blocks
 * (block(f, blocks + i*block_size, t) in turn); cv2 on the concatenation. */
typedef yolo_tensor *(*module_block_fn)(const yolo_forward_ctx *f, const void *block, yolo_tensor *x);
yolo_status module_split_chain_concat(const yolo_forward_ctx *f, const yolo_conv_block *cv1,
                                      const yolo_conv_block *cv2, yolo_tensor *x, int half, module_block_fn block,
                                      const void *blocks, size_t block_size, int n, yolo_module_outputs *out);
/* "name.leaf" (or "leaf" when name is empty) into buf; false (error set) when too long. */
bool module_join_name(yolo_module_ctx *ctx, char *buf, size_t size, const char *name, const char *leaf);

/* core/nn/model_forward.c: forward with every layer's first output kept
 * in layer_out (n_layers entries) when not NULL. */
yolo_status model_forward_all(yolo_model *m, yolo_graph *g, yolo_tensor *images, bool training, bool inference,
                              yolo_model_outputs *out, yolo_tensor **layer_out);

/* core/nn/model_build.c: the yaml file a model name resolves to, its
 * unified name first ("yolov8n-seg.yaml" -> "yolov8-seg.yaml"), as the
 * loader resolves it; false if neither is a file (an embedded yaml or none). */
bool model_yaml_file(const char *model, char *path, size_t size);
/* The text of the yaml a loaded task (opt's, then the registry's) embeds
 * for a model name that is no file: its unified name, that without the
 * YOLOv5u 'u', or the name itself. *found: the embedded name, *task: the
 * task embedding it. NULL if none does. */
const char *model_find_embedded(const yolo_model_options *opt, const char *model, const char **found,
                                const char **task);

/* core/nn/model_info.c */
int64_t model_layer_param_count(const yolo_model *m, int layer);

#endif
