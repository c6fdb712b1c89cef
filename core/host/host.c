/* The host API (yolo/yolo.h): the CLI's configuration, session and predict
 * code driven from a program. Keys go through yolo_cli_parse and
 * yolo_cli_build_config as command-line arguments do, images through
 * predict_input.c as `yolo predict` decodes them, and results are read
 * from the task's draw_predictions report (the objects val's save_json
 * writes), so nothing here knows a task. yolo_result_plot draws a result
 * with the draw module's calls the task plugins draw predictions with
 * (yolo_draw_mask, yolo_draw_object, yolo_draw_top_classes). */
#include "yolo/yolo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/modes.h"
#include "data/image.h"
#include "host/callbacks.h"
#include "modes/load_model.h"
#include "modes/predict_input.h"
#include "train/model_graph.h"
#include "train/run_plots.h"
#include "train/stop.h"
#include "yolo/draw.h"

/* ---- configuration from pairs -------------------------------------------- */

/* The argv `yolo MODE [task=T] [model=M] keys...` would have. */
typedef struct host_args {
    int argc;
    char **argv;
    yolo_cli_args cli;
} host_args;

static void host_args_free(host_args *a) {
    for (int i = 0; a->argv && i < a->argc; i++) free(a->argv[i]);
    free(a->argv);
    a->argv = NULL;
}

static yolo_status push(host_args *a, const char *fmt, const char *value) {
    int len = snprintf(NULL, 0, fmt, value);
    char *s = malloc((size_t)len + 1);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    snprintf(s, (size_t)len + 1, fmt, value);
    a->argv[a->argc++] = s;
    return YOLO_OK;
}

/* A pair is "key=value" or a bare bool key; what the command line would
 * read as a mode, help, version or an option is no key and is refused. */
static yolo_status check_pair(const char *pair) {
    if (pair[0] == '-' || (!strchr(pair, '=') && (yolo_cli_is_mode(pair) || strcmp(pair, "help") == 0 ||
                                                  strcmp(pair, "version") == 0)))
        return yolo_error(YOLO_ERR_CONFIG, "keys: '%s' is not a key=value pair (e.g. imgsz=320)", pair);
    if (!strchr(pair, '=') && (!pair[0] || strpbrk(pair, " \t")))
        return yolo_error(YOLO_ERR_CONFIG, "keys: '%s' is not a key=value pair (e.g. imgsz=320)", pair);
    return YOLO_OK;
}

/* The merged, validated configuration and the task plugin of
 * `yolo MODE [task=T] [model=M] keys...`, its messages the CLI's. */
static yolo_status host_config(const char *mode, const char *task, const char *model, const char *const *keys,
                               host_args *a, yolo_config **cfg, const yolo_task **plugin) {
    memset(a, 0, sizeof *a);
    int n = 0;
    while (keys && keys[n]) n++;
    if (n > YOLO_CLI_MAX_ARGS - 4) return yolo_error(YOLO_ERR_CONFIG, "keys: %d pairs (at most %d)", n, YOLO_CLI_MAX_ARGS - 4);
    a->argv = calloc((size_t)n + 5, sizeof *a->argv);
    if (!a->argv) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    yolo_status st = push(a, "%s", "yolo");
    if (!st) st = push(a, "%s", mode);
    if (!st && task) st = push(a, "task=%s", task);
    if (!st && model) st = push(a, "model=%s", model);
    for (int i = 0; !st && i < n; i++) {
        st = check_pair(keys[i]);
        if (!st) st = push(a, "%s", keys[i]);
    }
    if (!st) st = yolo_cli_parse(a->argc, a->argv, &a->cli);
    a->cli.source = "keys";
    int exit_code;
    if (!st) st = yolo_cli_build_config(&a->cli, cfg, plugin, &exit_code);
    return st;
}

/* ---- results --------------------------------------------------------------- */

struct yolo_result {
    char *path;
    int width, height;
    int n;
    float *xyxy; /* [n][4] */
    float *conf;
    int *cls;
    char **names; /* [n], the box's class name */
    int nc;
    float *probs;   /* [nc] (classify) */
    char *top_names[5]; /* the 5 most probable classes' names (classify), for plotting */
    uint8_t *masks; /* [n][mask_h][mask_w] at the model input (segment) */
    int mask_w, mask_h;
    int input_w, input_h;      /* the model input's size */
    double ms[3];              /* preprocess, inference, postprocess */
    yolo_image_meta letterbox; /* original -> model input */
};

void yolo_result_free(yolo_result *r) {
    if (!r) return;
    for (int i = 0; r->names && i < r->n; i++) free(r->names[i]);
    for (int j = 0; j < 5; j++) free(r->top_names[j]);
    free(r->names), free(r->path), free(r->xyxy), free(r->conf), free(r->cls), free(r->probs), free(r->masks);
    free(r);
}

void yolo_results_free(yolo_result **results, int64_t n) {
    for (int64_t i = 0; results && i < n; i++) yolo_result_free(results[i]);
    free(results);
}

const char *yolo_result_path(const yolo_result *r) { return r ? r->path : NULL; }
int yolo_result_width(const yolo_result *r) { return r ? r->width : 0; }
int yolo_result_height(const yolo_result *r) { return r ? r->height : 0; }
int yolo_result_num_boxes(const yolo_result *r) { return r ? r->n : 0; }

yolo_status yolo_result_box(const yolo_result *r, int i, float xyxy[4], float *conf, int *cls) {
    if (!r) return yolo_error(YOLO_ERR_ARG, "yolo_result_box: NULL result");
    if (i < 0 || i >= r->n) return yolo_error(YOLO_ERR_ARG, "yolo_result_box: box %d of %d", i, r->n);
    if (xyxy) memcpy(xyxy, r->xyxy + 4 * (size_t)i, 4 * sizeof *xyxy);
    if (conf) *conf = r->conf[i];
    if (cls) *cls = r->cls[i];
    return YOLO_OK;
}

const char *yolo_result_box_name(const yolo_result *r, int i) { return r && i >= 0 && i < r->n ? r->names[i] : NULL; }

const uint8_t *yolo_result_mask(const yolo_result *r, int i, int *width, int *height) {
    bool has = r && r->masks && i >= 0 && i < r->n;
    if (width) *width = has ? r->mask_w : 0;
    if (height) *height = has ? r->mask_h : 0;
    return has ? r->masks + (size_t)i * r->mask_w * r->mask_h : NULL;
}

yolo_status yolo_result_letterbox(const yolo_result *r, float *scale_x, float *scale_y, float *pad_x, float *pad_y) {
    if (!r) return yolo_error(YOLO_ERR_ARG, "yolo_result_letterbox: NULL result");
    if (scale_x) *scale_x = r->letterbox.ratio_x;
    if (scale_y) *scale_y = r->letterbox.ratio_y;
    if (pad_x) *pad_x = r->letterbox.pad_x;
    if (pad_y) *pad_y = r->letterbox.pad_y;
    return YOLO_OK;
}

yolo_status yolo_result_mask_original(const yolo_result *r, int i, uint8_t *out) {
    int mw, mh;
    const uint8_t *m = yolo_result_mask(r, i, &mw, &mh);
    if (!m || !out)
        return yolo_error(YOLO_ERR_ARG, "yolo_result_mask_original: %s", !out ? "NULL output" : r && r->masks ? "box out of range" : "the result has no masks");
    const yolo_image_meta *lb = &r->letterbox;
    for (int y = 0; y < r->height; y++) {
        int my = (int)floorf((y + 0.5f) * lb->ratio_y + lb->pad_y);
        for (int x = 0; x < r->width; x++) {
            int mx = (int)floorf((x + 0.5f) * lb->ratio_x + lb->pad_x);
            out[(size_t)y * r->width + x] = mx >= 0 && mx < mw && my >= 0 && my < mh ? m[(size_t)my * mw + mx] : 0;
        }
    }
    return YOLO_OK;
}

const float *yolo_result_probs(const yolo_result *r, int *nc) {
    if (nc) *nc = r && r->probs ? r->nc : 0;
    return r ? r->probs : NULL;
}

int yolo_result_top(const yolo_result *r, int *top, int k) {
    if (!r || !r->probs || !top || k < 1) return 0;
    if (k > 5) k = 5;
    if (k > r->nc) k = r->nc;
    for (int j = 0; j < k; j++) { /* the k most probable, ties to the lower class (Ultralytics' argsort is stable) */
        int best = -1;
        for (int c = 0; c < r->nc; c++) {
            bool taken = false;
            for (int t = 0; t < j && !taken; t++) taken = top[t] == c;
            if (!taken && (best < 0 || r->probs[c] > r->probs[best])) best = c;
        }
        top[j] = best;
    }
    return k;
}

/* ---- pixels ---------------------------------------------------------------- */

/* Checks interleaved pixels as yolo_predict_image takes them. */
static yolo_status check_pixels(const char *who, const char *what, int width, int height, size_t stride,
                                yolo_pixel_format format) {
    if (width < 1 || height < 1 || width > (1 << 16) || height > (1 << 16))
        return yolo_error(YOLO_ERR_ARG, "%s: image size %dx%d (1 to 65536 pixels a side)", who, width, height);
    if (stride < (size_t)width * 3)
        return yolo_error(YOLO_ERR_ARG, "%s: %s %zu bytes is less than width %d * 3 channels = %zu", who, what,
                          stride, width, (size_t)width * 3);
    if (format != YOLO_PIXELS_RGB && format != YOLO_PIXELS_BGR)
        return yolo_error(YOLO_ERR_ARG, "%s: pixel format %d (YOLO_PIXELS_RGB or YOLO_PIXELS_BGR)", who, (int)format);
    return YOLO_OK;
}

/* Copies rows between strided pixels in `format` and a packed RGB image. */
static void pixels_to_rgb(const uint8_t *pixels, size_t stride, yolo_pixel_format format, yolo_image *image) {
    for (int y = 0; y < image->height; y++) {
        const uint8_t *row = pixels + (size_t)y * stride;
        uint8_t *dst = image->data + (size_t)y * image->width * 3;
        if (format == YOLO_PIXELS_RGB) memcpy(dst, row, (size_t)image->width * 3);
        else
            for (int x = 0; x < image->width; x++)
                dst[3 * x] = row[3 * x + 2], dst[3 * x + 1] = row[3 * x + 1], dst[3 * x + 2] = row[3 * x];
    }
}

static void rgb_to_pixels(const yolo_image *image, uint8_t *out, size_t stride, yolo_pixel_format format) {
    for (int y = 0; y < image->height; y++) {
        const uint8_t *src = image->data + (size_t)y * image->width * 3;
        uint8_t *row = out + (size_t)y * stride;
        if (format == YOLO_PIXELS_RGB) memmove(row, src, (size_t)image->width * 3);
        else
            for (int x = 0; x < image->width; x++) { /* src may be row (in place) */
                uint8_t r = src[3 * x], g = src[3 * x + 1], b = src[3 * x + 2];
                row[3 * x] = b, row[3 * x + 1] = g, row[3 * x + 2] = r;
            }
    }
}

/* ---- the predictor -------------------------------------------------------- */

/* The keys a predictor honours: it returns results in memory one image a
 * call, so the CLI's file outputs (save, save_txt, save_crop, project, ...),
 * batch and retina_masks would be accepted and ignored: refused instead,
 * naming yolo_run("predict", ...), which writes them. */
static const char *const predictor_keys[] = {"imgsz", "conf", "iou", "max_det", "classes", "agnostic_nms", "half",
                                             "device", "threads", "rect", "end2end", "data", NULL};

static yolo_status check_predictor_keys(const char *const *keys) {
    char taken[256] = "";
    for (int k = 0; predictor_keys[k]; k++)
        snprintf(taken + strlen(taken), sizeof taken - strlen(taken), "%s%s", k ? ", " : "", predictor_keys[k]);
    for (int i = 0; keys && keys[i]; i++) {
        size_t len = strcspn(keys[i], "=");
        bool known = false;
        for (int k = 0; predictor_keys[k] && !known; k++)
            known = strlen(predictor_keys[k]) == len && strncmp(predictor_keys[k], keys[i], len) == 0;
        if (!known)
            return yolo_error(YOLO_ERR_CONFIG, "keys: '%s': a predictor returns its results in memory and does not "
                              "use %.*s (it takes %s); yolo_run(\"predict\", ...) writes the CLI's outputs",
                              keys[i], (int)len, keys[i], taken);
    }
    return YOLO_OK;
}

struct yolo_predictor {
    host_args args;
    yolo_config *cfg;
    yolo_session s;
    bool session_open;
    yolo_graph_cache graphs;
    int stride;                  /* rect padding multiple, 0: full imgsz (rect=False) */
    void *state;                 /* the task's metrics state, which its predict hooks use */
    const yolo_task_hooks *pics; /* draw_predictions, NULL for image-level tasks */
    const yolo_task_hooks *masks; /* predict_masks (plugin ABI 1.6), NULL when the task has none */
    yolo_canvas *canvas;         /* report_only draws nothing on it */
    yolo_predict_input in;
};

const char *yolo_predictor_task(const yolo_predictor *p) { return p && p->s.task ? p->s.task->name : NULL; }
int yolo_predictor_num_classes(const yolo_predictor *p) { return p ? p->s.tctx.nc : 0; }
const char *yolo_predictor_class_name(const yolo_predictor *p, int cls) {
    return p && p->s.tctx.names && cls >= 0 && cls < p->s.tctx.nc ? p->s.tctx.names[cls] : NULL;
}

static bool image_level(const yolo_predictor *p) { return (p->s.hooks->data.needs & YOLO_NEED_IMAGE_CLASS) != 0; }

void yolo_predictor_close(yolo_predictor *p) {
    if (!p) return;
    if (p->state) p->s.hooks->metrics_destroy(p->state);
    yolo_graph_cache_clear(&p->graphs);
    yolo_canvas_free(p->canvas);
    if (p->session_open) yolo_session_close(&p->s);
    yolo_config_free(p->cfg);
    host_args_free(&p->args);
    free(p);
}

yolo_status yolo_predictor_fuse(yolo_predictor *p) {
    if (!p) return yolo_error(YOLO_ERR_ARG, "yolo_predictor_fuse: NULL predictor");
    if (yolo_model_is_fused(p->s.model)) return YOLO_OK;
    yolo_graph_cache_clear(&p->graphs); /* its graphs run the batch norms that fusing removes */
    p->graphs = (yolo_graph_cache){.model = p->s.model, .training = false, .inference = true};
    return yolo_model_fuse(p->s.model);
}

yolo_status yolo_predictor_open(const char *model, const char *task, const char *const *keys, yolo_predictor **out) {
    if (!out) return yolo_error(YOLO_ERR_ARG, "yolo_predictor_open: NULL output");
    *out = NULL;
    if (!model || !model[0]) return yolo_error(YOLO_ERR_ARG, "yolo_predictor_open: no model (a yaml, .ckpt or .pt)");
    yolo_predictor *p = calloc(1, sizeof *p);
    if (!p) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    const yolo_task *plugin = NULL;
    /* the CLI's parse first, so a misspelt key gets its suggestion */
    yolo_status st = host_config("predict", task, model, keys, &p->args, &p->cfg, &plugin);
    if (!st) st = check_predictor_keys(keys);
    yolo_mode_context ctx = {.mode = "predict", .config = p->cfg, .task = plugin, .argc = p->args.argc,
                             .argv = p->args.argv};
    yolo_session_options so = {.need_data = false, .concerns = YOLO_SETTINGS_PREDICT, .checkpoint_args = true};
    if (!st) st = yolo_session_open(&ctx, &p->s, &so);
    p->session_open = st == YOLO_OK;
    if (!st) st = yolo_session_load_model(&p->s);
    if (!st) st = yolo_session_apply_half(&p->s);
    bool rect = true;
    if (!st) st = yolo_session_eval_rect(&p->s, &rect);
    if (!st) st = yolo_predict_check_imgsz(&p->s);
    if (!st) {
        p->graphs = (yolo_graph_cache){.model = p->s.model, .training = false, .inference = true};
        p->stride = rect ? yolo_model_grid_stride(p->s.model) : 0;
        st = p->s.hooks->metrics_create(&p->s.tctx, &p->state);
    }
    if (!st && !image_level(p)) {
        p->pics = yolo_picture_hooks(p->s.task);
        if (!p->pics || !p->pics->draw_predictions)
            st = yolo_error(YOLO_ERR_UNSUPPORTED, "task %s: its plugin reports no objects (no draw_predictions hook, "
                            "plugin ABI 1.1); the host API cannot read its predictions", p->s.task->name);
        else if (!(p->canvas = yolo_canvas_create(1, 1, (yolo_color){0, 0, 0})))
            st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
    }
    const yolo_abi_version abi = p->s.task ? p->s.task->abi : (yolo_abi_version){0, 0};
    if (!st && p->pics && (abi.major > 1 || abi.minor >= 6) && p->pics->predict_masks) p->masks = p->pics;
    if (st) {
        yolo_predictor_close(p);
        return st;
    }
    *out = p;
    return YOLO_OK;
}

/* Class probabilities: an image-level task's first eval output, [batch, nc]. */
static yolo_status read_probs(yolo_predictor *p, const yolo_host_tensor *t, yolo_result *r) {
    int64_t nc = t->ndim == 2 ? t->shape[1] : 0;
    if (t->ndim != 2 || t->shape[0] != 1 || nc < 1 || nc > (1 << 20))
        return yolo_error(YOLO_ERR_SHAPE, "task %s: its first output is not [1, nc] class probabilities (ndim %d)",
                          p->s.task->name, t->ndim);
    if (!(r->probs = malloc((size_t)nc * sizeof *r->probs))) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    memcpy(r->probs, t->data, (size_t)nc * sizeof *r->probs);
    r->nc = (int)nc;
    int top[5], k = yolo_result_top(r, top, 5);
    for (int j = 0; j < k; j++) {
        char num[16];
        const char *name = yolo_predictor_class_name(p, top[j]);
        if (!name) snprintf(num, sizeof num, "%d", top[j]), name = num;
        if (!(r->top_names[j] = strdup(name))) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    }
    return YOLO_OK;
}

/* The task's objects, most confident first: hooks list them in NMS order
 * or (drawing the best on top) reversed; a stable sort gives NMS order. */
static yolo_status read_boxes(yolo_predictor *p, const yolo_model_graph *mg, yolo_result *r) {
    yolo_draw_options opt = {.conf = 0, .report_only = true};
    yolo_drawn_result d = {0};
    yolo_status st = p->pics->draw_predictions(p->state, &p->in.batch, 0, mg->out.n, mg->host_out, &opt, p->canvas, &d);
    if (st) return st;
    int n = d.n;
    r->xyxy = malloc((size_t)(n ? n : 1) * 4 * sizeof *r->xyxy);
    r->conf = malloc((size_t)(n ? n : 1) * sizeof *r->conf);
    r->cls = malloc((size_t)(n ? n : 1) * sizeof *r->cls);
    r->names = calloc((size_t)(n ? n : 1), sizeof *r->names);
    int *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    if (!r->xyxy || !r->conf || !r->cls || !r->names || !order) {
        free(order);
        return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) { /* insertion sort of the reversed list by conf, descending, stable */
        int k = n - 1 - i, j = i;
        while (j > 0 && d.objects[order[j - 1]].conf < d.objects[k].conf) order[j] = order[j - 1], j--;
        order[j] = k;
    }
    for (int i = 0; i < n; i++) {
        const yolo_drawn_object *o = &d.objects[order[i]];
        memcpy(r->xyxy + 4 * (size_t)i, o->box, sizeof o->box);
        r->conf[i] = o->conf, r->cls[i] = o->cls;
        char num[16];
        const char *name = yolo_predictor_class_name(p, o->cls);
        if (!name) snprintf(num, sizeof num, "%d", (int)o->cls), name = num;
        if (!(r->names[i] = strdup(name))) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
        r->n = i + 1;
    }
    free(order);
    return st;
}

/* The task's instance masks, in the boxes' (NMS) order. */
static yolo_status read_masks(yolo_predictor *p, const yolo_model_graph *mg, yolo_result *r) {
    int n = 0;
    const uint8_t *masks = NULL;
    const yolo_batch *b = &p->in.batch;
    yolo_status st = p->masks->predict_masks(p->state, b, 0, mg->out.n, mg->host_out, &n, &masks);
    if (st) return st;
    if (n != r->n)
        return yolo_error(YOLO_ERR_SHAPE, "task %s: %d masks for %d boxes", p->s.task->name, n, r->n);
    size_t bytes = (size_t)n * b->width * b->height;
    if (!(r->masks = malloc(bytes ? bytes : 1))) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    memcpy(r->masks, masks, bytes);
    r->mask_w = b->width, r->mask_h = b->height;
    return YOLO_OK;
}

/* One decoded image through predict_input.c, the model and the task. */
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

yolo_status yolo_result_speed(const yolo_result *r, double *preprocess_ms, double *inference_ms,
                              double *postprocess_ms) {
    if (!r) return yolo_error(YOLO_ERR_ARG, "yolo_result_speed: NULL result");
    if (preprocess_ms) *preprocess_ms = r->ms[0];
    if (inference_ms) *inference_ms = r->ms[1];
    if (postprocess_ms) *postprocess_ms = r->ms[2];
    return YOLO_OK;
}

static yolo_status predict_one(yolo_predictor *p, const yolo_image *image, const char *path, yolo_result **out) {
    double t0 = now_ms();
    yolo_result *r = calloc(1, sizeof *r);
    if (!r) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    r->width = image->width, r->height = image->height;
    int64_t which = 0;
    yolo_status st = path && !(r->path = strdup(path)) ? yolo_error(YOLO_ERR_NOMEM, "out of memory") : YOLO_OK;
    if (!st) st = yolo_predict_input_fill(&p->in, &p->s, p->stride, image, &which, 1);
    double t1 = now_ms();
    yolo_model_graph *mg = NULL;
    if (!st) st = yolo_graph_cache_get(&p->graphs, &p->in.batch, &mg);
    if (!st) st = yolo_model_graph_forward(mg, &p->in.batch);
    double t2 = now_ms();
    if (!st && mg->out.n < 1) st = yolo_error(YOLO_ERR_SHAPE, "task %s: the model has no outputs", p->s.task->name);
    if (!st) st = image_level(p) ? read_probs(p, &mg->host_out[0], r) : read_boxes(p, mg, r);
    if (!st && p->masks) st = read_masks(p, mg, r);
    r->ms[0] = t1 - t0, r->ms[1] = t2 - t1, r->ms[2] = now_ms() - t2;
    r->letterbox = p->in.meta[0];
    r->input_w = p->in.batch.width, r->input_h = p->in.batch.height;
    yolo_predict_input_free(&p->in);
    if (st) {
        yolo_result_free(r);
        return path ? yolo_error_context(st, "%s", path) : st;
    }
    *out = r;
    return YOLO_OK;
}

yolo_status yolo_predict_image(yolo_predictor *p, const uint8_t *pixels, int width, int height, size_t stride,
                               yolo_pixel_format format, yolo_result **out) {
    if (out) *out = NULL;
    if (!p || !pixels || !out) return yolo_error(YOLO_ERR_ARG, "yolo_predict_image: NULL %s", !p ? "predictor" : !pixels ? "pixels" : "output");
    yolo_status st = check_pixels("yolo_predict_image", "stride", width, height, stride, format);
    yolo_image image = {0};
    if (!st) st = yolo_image_alloc(&image, width, height);
    if (st) return st;
    pixels_to_rgb(pixels, stride, format, &image); /* the model takes RGB (the decoder's order) */
    st = predict_one(p, &image, NULL, out);
    yolo_image_free(&image);
    return st;
}

yolo_status yolo_predict_source(yolo_predictor *p, const char *source, yolo_result ***results, int64_t *n) {
    if (results) *results = NULL;
    if (n) *n = 0;
    if (!p || !source || !results || !n)
        return yolo_error(YOLO_ERR_ARG, "yolo_predict_source: NULL %s", !p ? "predictor" : !source ? "source" : "output");
    yolo_predict_sources src = {0};
    yolo_status st = yolo_predict_sources_list(&src, source);
    yolo_result **all = st ? NULL : calloc((size_t)src.n_files, sizeof *all);
    if (!st && !all) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
    int64_t done = 0;
    for (int64_t k = 0; !st && k < src.n_files; k++) {
        yolo_image image = {0};
        if (yolo_predict_sources_decode(&src, k, &image)) { /* skipped, as `yolo predict` does */
            fprintf(stderr, "WARNING: %s; skipped\n", yolo_last_error());
            continue;
        }
        st = predict_one(p, &image, src.files[k], &all[done]);
        done += st == YOLO_OK;
        yolo_image_free(&image);
    }
    if (!st && done == 0)
        st = yolo_error(YOLO_ERR_FORMAT, "source=%s: none of its %lld files decoded as an image", source,
                        (long long)src.n_files);
    yolo_predict_sources_free(&src);
    if (st) {
        yolo_results_free(all, done);
        return st;
    }
    *results = all;
    *n = done;
    return YOLO_OK;
}

/* ---- drawing and image files --------------------------------------------- */

/* r onto the canvas of its image, as the task's draw_predictions draws a
 * prediction: masks first, then boxes, the most confident last (on top). */
static void plot_result(const yolo_result *r, int flags, const yolo_draw_options *opt,
                        yolo_canvas *c) {
    const yolo_image_meta *lb = &r->letterbox;
    float rx = lb->ratio_x > 0 ? lb->ratio_x : 1, ry = lb->ratio_y > 0 ? lb->ratio_y : 1;
    if (r->masks && !(flags & YOLO_PLOT_NO_MASKS)) {
        float place[4] = {-lb->pad_x / rx, -lb->pad_y / ry, r->mask_w / rx, r->mask_h / ry};
        for (int i = r->n - 1; i >= 0; i--)
            yolo_draw_mask(c, r->masks + (size_t)i * r->mask_w * r->mask_h, r->mask_w, r->mask_h, place,
                           yolo_class_color(r->cls[i]), 0.5);
    }
    for (int i = r->n - 1; i >= 0; i--) yolo_draw_object(c, r->xyxy + 4 * (size_t)i, r->cls[i], r->names[i], r->conf[i], opt);
    if (r->probs && !(flags & YOLO_PLOT_NO_PROBS)) { /* the visible top-left of the centre-cropped input */
        int top[5];
        const char *names[5];
        float probs[5];
        int k = yolo_result_top(r, top, 5);
        for (int j = 0; j < k; j++) names[j] = r->top_names[j], probs[j] = r->probs[top[j]];
        double margin = 0.03 * r->input_h;
        yolo_draw_options o = *opt;
        o.labels = true;
        yolo_draw_top_classes(c, (margin - lb->pad_x) / rx, (margin - lb->pad_y) / ry, k, top, names, probs, &o);
    }
}

yolo_status yolo_result_plot(const yolo_result *r, const uint8_t *pixels, int width,
                             int height, size_t stride, yolo_pixel_format format, int flags, double line_width,
                             uint8_t *out, size_t out_stride) {
    const char *who = "yolo_result_plot";
    if (!r || !pixels || !out)
        return yolo_error(YOLO_ERR_ARG, "%s: NULL %s", who, !r ? "result" : !pixels ? "pixels" : "output");
    yolo_status st = check_pixels(who, "stride", width, height, stride, format);
    if (!st) st = check_pixels(who, "out_stride", width, height, out_stride, format);
    if (st) return st;
    if (width > 32767 || height > 32767)
        return yolo_error(YOLO_ERR_ARG, "%s: image size %dx%d (the canvas takes up to 32767 pixels a side)", who, width, height);
    if (width != r->width || height != r->height)
        return yolo_error(YOLO_ERR_ARG, "%s: image size %dx%d is not the result's %dx%d (the image it was predicted on)",
                          who, width, height, r->width, r->height);
    yolo_image image = {0};
    st = yolo_image_alloc(&image, width, height);
    if (st) return st;
    pixels_to_rgb(pixels, stride, format, &image);
    yolo_canvas *c = yolo_canvas_from_image(&image);
    yolo_image_free(&image);
    if (!c) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for a %dx%d canvas", who, width, height);
    yolo_draw_options opt = {.conf = 0, .labels = !(flags & YOLO_PLOT_NO_LABELS), .show_conf = !(flags & YOLO_PLOT_NO_CONF),
                             .boxes = !(flags & YOLO_PLOT_NO_BOXES),
                             .line_width = yolo_draw_line_width(width, height, line_width)};
    plot_result(r, flags, &opt, c);
    st = yolo_canvas_to_image(c, &image);
    yolo_canvas_free(c);
    if (st) return st;
    rgb_to_pixels(&image, out, out_stride, format);
    yolo_image_free(&image);
    return YOLO_OK;
}

yolo_status yolo_image_read(const char *path, yolo_pixel_format format, uint8_t **pixels, int *width, int *height) {
    if (pixels) *pixels = NULL;
    if (width) *width = 0;
    if (height) *height = 0;
    if (!path || !pixels || !width || !height)
        return yolo_error(YOLO_ERR_ARG, "yolo_image_read: NULL %s", !path ? "path" : "output");
    if (format != YOLO_PIXELS_RGB && format != YOLO_PIXELS_BGR)
        return yolo_error(YOLO_ERR_ARG, "yolo_image_read: pixel format %d (YOLO_PIXELS_RGB or YOLO_PIXELS_BGR)", (int)format);
    yolo_image image = {0};
    yolo_status st = yolo_image_load_file(path, &image);
    if (st) return st;
    if (format == YOLO_PIXELS_BGR) rgb_to_pixels(&image, image.data, (size_t)image.width * 3, format);
    *pixels = image.data, *width = image.width, *height = image.height;
    return YOLO_OK;
}

void yolo_image_data_free(uint8_t *pixels) { free(pixels); }

yolo_status yolo_image_write(const char *path, const uint8_t *pixels, int width, int height, size_t stride,
                             yolo_pixel_format format) {
    if (!path || !pixels) return yolo_error(YOLO_ERR_ARG, "yolo_image_write: NULL %s", !path ? "path" : "pixels");
    yolo_status st = check_pixels("yolo_image_write", "stride", width, height, stride, format);
    yolo_image image = {0};
    if (!st) st = yolo_image_alloc(&image, width, height);
    if (st) return st;
    pixels_to_rgb(pixels, stride, format, &image);
    st = yolo_image_save(&image, path);
    yolo_image_free(&image);
    return st;
}

/* ---- metrics and modes ---------------------------------------------------- */

struct yolo_metrics {
    int n;
    char **names;
    double *values;
};

int yolo_metrics_count(const yolo_metrics *m) { return m ? m->n : 0; }
const char *yolo_metrics_name(const yolo_metrics *m, int i) { return m && i >= 0 && i < m->n ? m->names[i] : NULL; }
double yolo_metrics_value(const yolo_metrics *m, int i) { return m && i >= 0 && i < m->n ? m->values[i] : 0.0; }

yolo_status yolo_metrics_get(const yolo_metrics *m, const char *name, double *value) {
    if (!m || !name || !value) return yolo_error(YOLO_ERR_ARG, "yolo_metrics_get: NULL argument");
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0) {
            *value = m->values[i];
            return YOLO_OK;
        }
    return yolo_error(YOLO_ERR_ARG, "yolo_metrics_get: no metric '%s' (%d metrics, e.g. '%s')", name, m->n,
                      m->n ? m->names[0] : "none");
}

void yolo_metrics_free(yolo_metrics *m) {
    if (!m) return;
    for (int i = 0; m->names && i < m->n; i++) free(m->names[i]);
    free(m->names), free(m->values), free(m);
}

/* The map of n names and values plus "fitness". */
static yolo_status metrics_new(int n, const char *const *names, const double *values, double fitness, yolo_metrics **out) {
    yolo_metrics *m = calloc(1, sizeof *m);
    if (m) m->names = calloc((size_t)n + 1, sizeof *m->names), m->values = calloc((size_t)n + 1, sizeof *m->values);
    yolo_status st = m && m->names && m->values ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i <= n; i++) {
        if (!(m->names[i] = strdup(i < n ? names[i] : "fitness"))) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
        m->values[i] = i < n ? values[i] : fitness;
        m->n = i + 1;
    }
    if (st) {
        yolo_metrics_free(m);
        return st;
    }
    *out = m;
    return YOLO_OK;
}

/* ---- training events ------------------------------------------------------ */

static const char *const events[] = {"on_train_epoch_end", "on_fit_epoch_end", "on_train_end"};
#define N_EVENTS 3
#define MAX_CALLBACKS 16

struct yolo_callbacks {
    struct {
        yolo_callback fn;
        void *user;
    } added[N_EVENTS][MAX_CALLBACKS];
    int n[N_EVENTS];
};

yolo_status yolo_callbacks_new(yolo_callbacks **out) {
    if (!out) return yolo_error(YOLO_ERR_ARG, "yolo_callbacks_new: NULL output");
    return (*out = calloc(1, sizeof **out)) ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "out of memory");
}

void yolo_callbacks_free(yolo_callbacks *cb) { free(cb); }

yolo_status yolo_callbacks_add(yolo_callbacks *cb, const char *event, yolo_callback fn, void *user) {
    if (!cb || !event || !fn) return yolo_error(YOLO_ERR_ARG, "yolo_callbacks_add: NULL %s", !cb ? "callbacks" : !event ? "event" : "function");
    for (int e = 0; e < N_EVENTS; e++) {
        if (strcmp(event, events[e]) != 0) continue;
        if (cb->n[e] == MAX_CALLBACKS)
            return yolo_error(YOLO_ERR_ARG, "yolo_callbacks_add: %s has %d callbacks already (the most)", event, MAX_CALLBACKS);
        cb->added[e][cb->n[e]].fn = fn, cb->added[e][cb->n[e]].user = user;
        cb->n[e]++;
        return YOLO_OK;
    }
    return yolo_error(YOLO_ERR_ARG, "yolo_callbacks_add: event '%s' is not one of on_train_epoch_end, on_fit_epoch_end, "
                      "on_train_end", event);
}

void yolo_callbacks_fire(const yolo_callbacks *cb, const char *event, int epoch, const yolo_task_hooks *hooks,
                         const float *train_items, const double *metrics, const float *val_losses, double fitness) {
    int e = 0;
    while (e < N_EVENTS && strcmp(event, events[e]) != 0) e++;
    if (!cb || e == N_EVENTS || cb->n[e] == 0) return;
    enum { MAX = 2 * YOLO_TASK_MAX_ITEMS + 33 };
    char text[MAX][96], *names[MAX];
    double values[MAX];
    int n = 0, nl = hooks->n_loss_items < YOLO_TASK_MAX_ITEMS ? hooks->n_loss_items : YOLO_TASK_MAX_ITEMS;
    int nm = hooks->n_metrics < 32 ? hooks->n_metrics : 32;
    for (int k = 0; train_items && k < nl; k++, n++)
        snprintf(text[n], sizeof text[n], "train/%s", hooks->loss_names[k]), values[n] = train_items[k];
    for (int k = 0; metrics && k < nm; k++, n++)
        snprintf(text[n], sizeof text[n], "%s", hooks->metric_names[k]), values[n] = metrics[k];
    for (int k = 0; val_losses && k < nl; k++, n++)
        snprintf(text[n], sizeof text[n], "val/%s", hooks->loss_names[k]), values[n] = val_losses[k];
    if (metrics) snprintf(text[n], sizeof text[n], "fitness"), values[n++] = fitness;
    for (int k = 0; k < n; k++) names[k] = text[k];
    yolo_metrics m = {.n = n, .names = names, .values = values};
    for (int k = 0; k < cb->n[e]; k++) cb->added[e][k].fn(cb->added[e][k].user, event, epoch, &m);
}

void yolo_train_cancel(void) { yolo_stop_cancel(true); }

static _Thread_local char last_output[1100];

const char *yolo_last_output(void) { return last_output; }

yolo_status yolo_run(const char *mode, const char *task, const char *const *keys, const yolo_callbacks *callbacks,
                     yolo_metrics **metrics) {
    if (metrics) *metrics = NULL;
    if (!mode) return yolo_error(YOLO_ERR_ARG, "yolo_run: NULL mode");
    yolo_mode_fn fn = yolo_cli_mode_function(mode);
    if (!fn)
        return yolo_error(YOLO_ERR_CONFIG, "yolo_run: mode '%s' is not one of train, val, predict, export, info", mode);
    host_args a;
    yolo_config *cfg = NULL;
    const yolo_task *plugin = NULL;
    yolo_status st = host_config(mode, task, NULL, keys, &a, &cfg, &plugin);
    last_output[0] = '\0';
    yolo_mode_context ctx = {.mode = mode, .config = cfg, .task = plugin, .argc = a.argc, .argv = a.argv,
                             .callbacks = callbacks, .wrote = last_output, .wrote_size = sizeof last_output};
    bool train = strcmp(mode, "train") == 0;
    if (train) yolo_stop_cancel(false); /* a cancel of an earlier run is no cancel of this one */
    if (!st && train) { /* the CLI re-launches itself under mpirun for more ranks */
        int world = 1;
        st = yolo_train_launch_world(&ctx, &world);
        if (!st && world > 1)
            st = yolo_error(YOLO_ERR_UNSUPPORTED, "yolo_run: train on %d ranks (world=, device=) needs the yolo command "
                            "under mpirun; the host API trains on one", world);
    }
    if (!st && strcmp(mode, "val") == 0) {
        yolo_val_outcome r;
        st = yolo_mode_val_run(&ctx, &r);
        if (!st && metrics) st = metrics_new(r.n, r.names, r.values, r.fitness, metrics);
    } else if (!st) {
        st = fn(&ctx);
    }
    if (train) yolo_stop_cancel(false);
    yolo_config_free(cfg);
    host_args_free(&a);
    fflush(stdout);
    return st;
}
