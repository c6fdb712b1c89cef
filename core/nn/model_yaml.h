/* The parsed form of an Ultralytics model yaml (core/nn/model_yaml.c).
 *
 * Parsing checks the structure (types, row shapes, `from` references,
 * scales) and evaluates argument scalars as Ultralytics does (None, bools,
 * numbers, nn.X() activations, `nc`); building the modules is
 * core/nn/model_build.c's job. Every error names "file:line:column". */
#ifndef YOLO_NN_MODEL_YAML_H
#define YOLO_NN_MODEL_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "yolo/model.h"

typedef struct model_arena_block model_arena_block;

/* A bump allocator for everything a spec holds (freed at once). */
typedef struct model_arena {
    model_arena_block *head;
} model_arena;

void *model_arena_alloc(model_arena *arena, size_t size); /* zeroed; NULL on failure */
char *model_arena_strdup(model_arena *arena, const char *s, size_t len);
void model_arena_free(model_arena *arena);

typedef struct model_scale {
    char letter[16];
    double depth, width, max_channels; /* (0, 4], (0, 4], [1, 8192] */
    int line, column;                  /* of its key under `scales:` (0: not from `scales:`) */
} model_scale;

typedef struct model_row {
    int from[YOLO_MODULE_MAX_INPUTS]; /* as written: negative is relative */
    int n_from;
    bool from_list;                   /* written as a list */
    int repeats;
    const char *module;
    yolo_arg *args;
    int n_args;
    int line, column;                 /* of the row */
    int module_line, module_column;   /* of the module name */
    bool in_head;                     /* listed under `head:` */
} model_row;

typedef struct model_spec {
    const char *name;      /* file name as given, for messages */
    int nc;                /* -1 if absent */
    int ch;                /* input channels (3 if absent) */
    bool has_activation;
    yolo_act activation;
    const char *activation_text;
    model_scale *scales;
    int n_scales;
    bool has_multiples;    /* YOLOv5-style depth_multiple / width_multiple */
    int reg_max;           /* Ultralytics 8.4's reg_max: DFL bins of the boxes (16 if absent; YOLO26: 1) */
    bool end2end;          /* Ultralytics 8.4's end2end: a one-to-one head beside the NMS one (YOLO26) */
    double depth_multiple, width_multiple;
    model_row *rows;
    int n_rows;
    model_arena arena;
} model_spec;

/* Parses text (size bytes) into *spec. On failure spec is empty and the
 * error names "name:line:column". */
yolo_status model_spec_parse(const char *name, const char *text, size_t size, model_spec *spec);
void model_spec_free(model_spec *spec);

/* Evaluates one scalar as Ultralytics evaluates a yaml arg (None, bool, int,
 * float, nn.X(), else a string). Errors (an activation that is not built)
 * name name:line:column. */
yolo_status model_arg_from_scalar(const char *name, const char *text, bool quoted, int line, int column,
                                  model_arena *arena, yolo_arg *out);

/* Parses "nn.ReLU()", "nn.SiLU(inplace=True)", "torch.nn.Identity()" into an
 * activation; false if the text is not of that form at all. *known is false
 * for a well-formed nn.X() whose X is not built. */
bool model_parse_activation(const char *text, yolo_act *act, bool *known);

/* The yaml text a model was built from (kept for checkpoints). */
const char *yolo_model_yaml_text(const yolo_model *model);

/* Its batch norms' eps and momentum: YOLO_BN_EPS/MOMENTUM unless a .pt
 * said otherwise (Ultralytics' classify models keep PyTorch's 1e-5/0.1),
 * which the yaml cannot say, so checkpoints keep them beside it. Set
 * before the first forward. */
void yolo_model_bn_constants(const yolo_model *model, double *eps, double *momentum);
void yolo_model_set_bn_constants(yolo_model *model, double eps, double momentum);

struct yolo_task;
/* OK when the model's last layer is one of the task's head modules; else
 * an error naming the yaml, the layer and the heads the task has. */
yolo_status yolo_model_check_head(const yolo_model *model, const struct yolo_task *task);

#endif
