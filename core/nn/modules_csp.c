/* The CSP family of core module types (Ultralytics' ultralytics/nn/modules/
 * block.py): Bottleneck, C2f (YOLOv8), C3 (YOLOv5), C3k2 with its C3k inner
 * blocks (YOLO11), C2fCIB with CIB inner blocks (YOLOv10) and C2
 * (YOLOv8-p6). yaml args as parse_model passes them:
 * the input channels first and, for all but Bottleneck, `repeats` inside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model_internal.h"

/* ---- Bottleneck(c1, c2, shortcut=True, g=1, k=(3, 3), e=0.5) ---- */

typedef struct bottleneck {
    yolo_conv_block cv1, cv2;
    bool add;
} bottleneck;

static yolo_status bottleneck_init(yolo_module_ctx *ctx, bottleneck *b, const char *name, int c1, int c2,
                                   bool shortcut, int g, int k1, int k2, double e) {
    char n1[64], n2[64];
    if (!module_join_name(ctx, n1, sizeof(n1), name, "cv1") || !module_join_name(ctx, n2, sizeof(n2), name, "cv2"))
        return YOLO_ERR_ARG;
    int c_ = (int)(c2 * e);
    yolo_status st;
    if ((st = yolo_conv_block_init(ctx, &b->cv1, n1, c1, c_, k1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, n2, c_, c2, k2, 1, YOLO_AUTOPAD, g, 1, YOLO_ACT_DEFAULT)))
        return st;
    b->add = shortcut && c1 == c2;
    return YOLO_OK;
}

static yolo_tensor *bottleneck_forward(const yolo_forward_ctx *f, const void *block, yolo_tensor *x) {
    const bottleneck *b = block;
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv2, yolo_conv_block_forward(f, &b->cv1, x));
    return b->add && y ? yolo_add(f->graph, x, y) : y;
}

/* n bottlenecks named "<name>.m.<i>" (or "m.<i>") in the model's allocations. */
static bottleneck *bottlenecks_init(yolo_module_ctx *ctx, const char *name, int n, int c, bool shortcut, int g,
                                    int k1, int k2, double e) {
    bottleneck *m = module_alloc(ctx, sizeof(bottleneck) * (size_t)(n ? n : 1));
    if (!m) {
        yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char leaf[32], full[64];
        snprintf(leaf, sizeof(leaf), "m.%d", i);
        if (!module_join_name(ctx, full, sizeof(full), name, leaf) ||
            bottleneck_init(ctx, &m[i], full, c, c, shortcut, g, k1, k2, e))
            return NULL;
    }
    return m;
}

static yolo_status kernel_pair_arg(yolo_module_ctx *ctx, int i, int *k1, int *k2) {
    const yolo_arg *a = yolo_module_arg(ctx, i);
    *k1 = *k2 = 3;
    if (!a || a->kind == YOLO_ARG_NULL) return YOLO_OK;
    if (a->kind == YOLO_ARG_INT) {
        *k1 = *k2 = (int)a->i;
    } else if (a->kind == YOLO_ARG_LIST && a->n_items == 2 && a->items[0].kind == YOLO_ARG_INT &&
               a->items[1].kind == YOLO_ARG_INT) {
        *k1 = (int)a->items[0].i;
        *k2 = (int)a->items[1].i;
    } else {
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "argument %d (k) must be [k1, k2]", i);
    }
    if (*k1 < 1 || *k2 < 1 || *k1 > 31 || *k2 > 31)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "kernel sizes %d, %d out of range", *k1, *k2);
    return YOLO_OK;
}

static yolo_status check_g_e(yolo_module_ctx *ctx, int64_t g, double e) {
    if (g < 1 || !(e > 0) || e > 16) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "g=%lld e=%g out of range", (long long)g, e);
    return YOLO_OK;
}

static yolo_status bottleneck_build(yolo_module_ctx *ctx) {
    int c1, c2, k1, k2;
    bool shortcut;
    int64_t g;
    double e;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_bool(ctx, 1, true, &shortcut)) || (st = yolo_module_arg_int(ctx, 2, 1, &g)) ||
        (st = kernel_pair_arg(ctx, 3, &k1, &k2)) || (st = yolo_module_arg_float(ctx, 4, 0.5, &e)) ||
        (st = check_g_e(ctx, g, e)))
        return st;
    bottleneck *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = bottleneck_init(ctx, b, "", c1, c2, shortcut, (int)g, k1, k2, e))) return st;
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d%s]", c1, c2, module_args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status bottleneck_module_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                             yolo_module_outputs *out) {
    (void)n_in;
    return module_one_output(out, bottleneck_forward(f, state, in[0]));
}

/* ---- the C3 form: cv1, cv2 (c1 -> c_), n bottlenecks after cv1, cv3 on the concatenation ----
 * C3(c1, c2, n=1, shortcut=True, g=1, e=0.5): inner kernels (1, 3);
 * C3k(c1, c2, n=1, shortcut=True, g=1, e=0.5, k=3): inner kernels (k, k). */

struct c3_block {
    int n, c;
    yolo_conv_block cv1, cv2, cv3;
    bottleneck *m;
};

size_t c3_block_size(void) { return sizeof(c3_block); }

static yolo_status c3_block_init(yolo_module_ctx *ctx, c3_block *b, const char *name, int c1, int c2, int n,
                                 bool shortcut, int g, double e, int k1, int k2) {
    char n1[64], n2[64], n3[64];
    if (!module_join_name(ctx, n1, sizeof(n1), name, "cv1") || !module_join_name(ctx, n2, sizeof(n2), name, "cv2") ||
        !module_join_name(ctx, n3, sizeof(n3), name, "cv3"))
        return YOLO_ERR_ARG;
    b->n = n;
    b->c = (int)(c2 * e);
    if (b->c < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %d*%g < 1", c2, e);
    yolo_status st;
    if ((st = yolo_conv_block_init(ctx, &b->cv1, n1, c1, b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, n2, c1, b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv3, n3, 2 * b->c, c2, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)))
        return st;
    b->m = bottlenecks_init(ctx, name, n, b->c, shortcut, g, k1, k2, 1.0);
    return b->m ? YOLO_OK : YOLO_ERR_CONFIG;
}

yolo_status c3k_block_init(yolo_module_ctx *ctx, c3_block *b, const char *name, int c1, int c2, int n, bool shortcut,
                           int g) {
    return c3_block_init(ctx, b, name, c1, c2, n, shortcut, g, 0.5, 3, 3);
}

yolo_tensor *c3_block_forward(const yolo_forward_ctx *f, const c3_block *b, yolo_tensor *x) {
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv1, x);
    for (int i = 0; y && i < b->n; i++) y = bottleneck_forward(f, &b->m[i], y);
    yolo_tensor *parts[2] = {y, yolo_conv_block_forward(f, &b->cv2, x)};
    return parts[0] && parts[1] ? yolo_conv_block_forward(f, &b->cv3, yolo_concat(f->graph, 2, parts, 1)) : NULL;
}

/* ---- the C2f form: cv1 (c1 -> 2c), chunk, n inner blocks chained on the second half, cv2 on all ----
 * C2f(c1, c2, n=1, shortcut=False, g=1, e=0.5): Bottleneck(c, c, shortcut, g, (3, 3), e=1.0);
 * C3k2(c1, c2, n=1, c3k=False, e=0.5, g=1, shortcut=True): Bottleneck(c, c, shortcut, g) (e=0.5),
 * or with c3k C3k(c, c, 2, shortcut, g). */

typedef struct c2f_block {
    int n, c;
    yolo_conv_block cv1, cv2;
    bottleneck *m; /* n of them, or NULL when m3 */
    c3_block *m3;  /* C3k2 with c3k: n C3k blocks */
    psa_block **psa; /* C3k2 with attn (YOLO26): unit i is m[i] then psa[i] */
    cib_block **cib; /* C2fCIB: n CIB blocks, or NULL */
} c2f_block;

/* One inner block of a C2f-form module: a Bottleneck (then, with attn, a PSABlock), a C3k or a CIB. */
static yolo_tensor *c2f_inner_forward(const yolo_forward_ctx *f, const c2f_block *b, int i, yolo_tensor *x) {
    if (b->m3) return c3_block_forward(f, &b->m3[i], x);
    if (b->cib) return cib_block_forward(f, b->cib[i], x);
    x = bottleneck_forward(f, &b->m[i], x);
    return b->psa && x ? psa_block_forward(f, b->psa[i], x) : x;
}

static yolo_status c2f_block_convs(yolo_module_ctx *ctx, c2f_block *b, int c1, int c2, int n, double e) {
    b->n = n;
    b->c = (int)(c2 * e);
    if (b->c < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %d*%g < 1", c2, e);
    yolo_status st;
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, 2 * b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", (2 + n) * b->c, c2, 1, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)))
        return st;
    return YOLO_OK;
}

static yolo_status c2f_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                               yolo_module_outputs *out) {
    (void)n_in;
    const c2f_block *b = state;
    yolo_tensor *stack[2 + 64];
    yolo_tensor **ys = b->n + 2 <= 66 ? stack : malloc(sizeof(yolo_tensor *) * (size_t)(b->n + 2));
    if (!ys) return yolo_error(YOLO_ERR_NOMEM, "C2f forward: out of memory");
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv1, in[0]);
    yolo_tensor *r = y ? yolo_chunk(f->graph, y, 2, 1, ys) : NULL;
    for (int i = 0; r && i < b->n; i++) {
        ys[2 + i] = c2f_inner_forward(f, b, i, ys[1 + i]);
        if (!ys[2 + i]) r = NULL;
    }
    y = r ? yolo_conv_block_forward(f, &b->cv2, yolo_concat(f->graph, 2 + b->n, ys, 1)) : NULL;
    if (ys != stack) free(ys);
    return module_one_output(out, y);
}

/* The yaml args [c2, shortcut, g, e] of C2f, C3 and C2. */
static yolo_status csp_args(yolo_module_ctx *ctx, bool shortcut_default, int *c1, int *c2, bool *shortcut,
                            int64_t *g, double *e) {
    yolo_status st;
    if ((st = module_single_input(ctx, c1)) || (st = module_out_channels_arg(ctx, c2)) ||
        (st = yolo_module_arg_bool(ctx, 1, shortcut_default, shortcut)) || (st = yolo_module_arg_int(ctx, 2, 1, g)) ||
        (st = yolo_module_arg_float(ctx, 3, 0.5, e)))
        return st;
    return check_g_e(ctx, *g, *e);
}

static yolo_status csp_build(yolo_module_ctx *ctx, bool c2f) {
    int c1, c2;
    bool shortcut;
    int64_t g;
    double e;
    yolo_status st = csp_args(ctx, !c2f, &c1, &c2, &shortcut, &g, &e);
    if (st) return st;
    const int n = yolo_module_repeats(ctx);
    if (c2f) {
        c2f_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
        if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        if ((st = c2f_block_convs(ctx, b, c1, c2, n, e))) return st;
        if (!(b->m = bottlenecks_init(ctx, "", n, b->c, shortcut, (int)g, 3, 3, 1.0))) return YOLO_ERR_CONFIG;
    } else {
        c3_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
        if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        if ((st = c3_block_init(ctx, b, "", c1, c2, n, shortcut, (int)g, e, 1, 3))) return st;
    }
    return module_finish_repeated(ctx, c1, c2, n, 1);
}

static yolo_status c2f_build(yolo_module_ctx *ctx) { return csp_build(ctx, true); }
static yolo_status c3_build(yolo_module_ctx *ctx) { return csp_build(ctx, false); }

static yolo_status c3_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                              yolo_module_outputs *out) {
    (void)n_in;
    return module_one_output(out, c3_block_forward(f, state, in[0]));
}

/* ---- C3k2(c1, c2, n=1, c3k=False, e=0.5, attn=False, g=1, shortcut=True) ----
 * parse_model turns c3k on for the m, l and x scales whatever the yaml says.
 * Ultralytics 8.4 puts attn before g: a bool there is 8.4's attn (then g and
 * shortcut follow), an integer 8.3's g. attn (YOLO26) makes each inner
 * block Sequential(Bottleneck(c, c, shortcut, g), PSABlock(c, 0.5,
 * max(c // 64, 1))), named m.<i>.0 and m.<i>.1; it wins over c3k. */

/* n attn units m.<i>.0 (Bottleneck) and m.<i>.1 (PSABlock). */
static yolo_status attn_units_init(yolo_module_ctx *ctx, c2f_block *b, int n, bool shortcut, int g) {
    b->m = module_alloc(ctx, sizeof(bottleneck) * (size_t)(n ? n : 1));
    b->psa = module_alloc(ctx, sizeof(psa_block *) * (size_t)(n ? n : 1));
    if (!b->m || !b->psa) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    const int heads = b->c / 64 > 1 ? b->c / 64 : 1;
    for (int i = 0; i < n; i++) {
        char n0[32], n1[32];
        snprintf(n0, sizeof(n0), "m.%d.0", i);
        snprintf(n1, sizeof(n1), "m.%d.1", i);
        yolo_status st;
        if (!(b->psa[i] = module_alloc(ctx, psa_block_size())))
            return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        if ((st = bottleneck_init(ctx, &b->m[i], n0, b->c, b->c, shortcut, g, 3, 3, 0.5)) ||
            (st = psa_block_init(ctx, b->psa[i], n1, b->c, heads)))
            return st;
    }
    return YOLO_OK;
}

static yolo_status c3k2_build(yolo_module_ctx *ctx) {
    int c1, c2;
    bool c3k, shortcut;
    int64_t g;
    double e;
    yolo_status st;
    const yolo_arg *attn_arg = yolo_module_arg(ctx, 3);
    const int g_at = attn_arg && attn_arg->kind == YOLO_ARG_BOOL ? 4 : 3; /* 8.4's attn, or 8.3's g */
    const bool attn = attn_arg && attn_arg->kind == YOLO_ARG_BOOL && attn_arg->b;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_bool(ctx, 1, false, &c3k)) || (st = yolo_module_arg_float(ctx, 2, 0.5, &e)) ||
        (st = yolo_module_arg_int(ctx, g_at, 1, &g)) || (st = yolo_module_arg_bool(ctx, g_at + 1, true, &shortcut)) ||
        (st = check_g_e(ctx, g, e)))
        return st;
    const char *scale = ctx->model->scale;
    if (scale[0] && !scale[1] && strchr("mlx", scale[0])) c3k = true;
    const int n = yolo_module_repeats(ctx);
    c2f_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = c2f_block_convs(ctx, b, c1, c2, n, e))) return st;
    if (attn) {
        if ((st = attn_units_init(ctx, b, n, shortcut, (int)g))) return st;
    } else if (c3k) {
        if (!(b->m3 = module_alloc(ctx, sizeof(c3_block) * (size_t)(n ? n : 1))))
            return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof(name), "m.%d", i);
            if ((st = c3k_block_init(ctx, &b->m3[i], name, b->c, b->c, 2, shortcut, (int)g))) return st;
        }
    } else if (!(b->m = bottlenecks_init(ctx, "", n, b->c, shortcut, (int)g, 3, 3, 0.5))) {
        return YOLO_ERR_CONFIG;
    }
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d, %d, %s%s]", c1, c2, n, c3k ? "True" : "False",
                              module_args_tail(ctx, 2, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

/* ---- C2fCIB(c1, c2, n=1, shortcut=False, lk=False, g=1, e=0.5) ----
 * C2f's convs around n CIB(c, c, shortcut, e=1.0, lk) blocks, named m.<i>. */

static yolo_status c2fcib_build(yolo_module_ctx *ctx) {
    int c1, c2;
    bool shortcut, lk;
    int64_t g;
    double e;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_bool(ctx, 1, false, &shortcut)) || (st = yolo_module_arg_bool(ctx, 2, false, &lk)) ||
        (st = yolo_module_arg_int(ctx, 3, 1, &g)) || (st = yolo_module_arg_float(ctx, 4, 0.5, &e)) ||
        (st = check_g_e(ctx, g, e)))
        return st;
    const int n = yolo_module_repeats(ctx);
    c2f_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = c2f_block_convs(ctx, b, c1, c2, n, e))) return st;
    if (!(b->cib = module_alloc(ctx, sizeof(cib_block *) * (size_t)(n ? n : 1))))
        return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "m.%d", i);
        if (!(b->cib[i] = module_alloc(ctx, cib_block_size())))
            return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        if ((st = cib_block_init(ctx, b->cib[i], name, b->c, b->c, shortcut, 1.0, lk))) return st;
    }
    return module_finish_repeated(ctx, c1, c2, n, 1);
}

/* ---- C2(c1, c2, n=1, shortcut=True, g=1, e=0.5): cv1 (c1 -> 2c), chunk a, b; cv2(cat(m(a), b)) ---- */

typedef struct c2_block {
    int n;
    yolo_conv_block cv1, cv2;
    bottleneck *m;
} c2_block;

static yolo_status c2_build(yolo_module_ctx *ctx) {
    int c1, c2;
    bool shortcut;
    int64_t g;
    double e;
    yolo_status st = csp_args(ctx, true, &c1, &c2, &shortcut, &g, &e);
    if (st) return st;
    c2_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->n = yolo_module_repeats(ctx);
    const int c = (int)(c2 * e);
    if (c < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %d*%g < 1", c2, e);
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, 2 * c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", 2 * c, c2, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)))
        return st;
    if (!(b->m = bottlenecks_init(ctx, "", b->n, c, shortcut, (int)g, 3, 3, 1.0))) return YOLO_ERR_CONFIG;
    return module_finish_repeated(ctx, c1, c2, b->n, 1);
}

static yolo_status c2_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                              yolo_module_outputs *out) {
    (void)n_in;
    const c2_block *b = state;
    return module_split_chain_concat(f, &b->cv1, &b->cv2, in[0], 0, bottleneck_forward, b->m, sizeof(*b->m), b->n,
                                     out);
}

/* ---- the table entries (modules_core.c lists them) ---- */

const yolo_module_type yolo_bottleneck_type = {"Bottleneck", "two Convs with an optional residual",
                                               bottleneck_build, bottleneck_module_forward, NULL, NULL, 0};
const yolo_module_type yolo_c2f_type = {"C2f", "CSP bottleneck with 2 convolutions (YOLOv8)", c2f_build, c2f_forward,
                                        NULL, NULL, YOLO_MODULE_REPEATS_INSIDE};
const yolo_module_type yolo_c3_type = {"C3", "CSP bottleneck with 3 convolutions (YOLOv5)", c3_build, c3_forward,
                                       NULL, NULL, YOLO_MODULE_REPEATS_INSIDE};
/* Ultralytics' parse_model sets legacy=False on meeting C3k2: the heads of such a model take their current form */
const yolo_module_type yolo_c3k2_type = {"C3k2", "C2f with Bottleneck or C3k (c3k) inner blocks (YOLO11)",
                                         c3k2_build, c2f_forward, NULL, NULL,
                                         YOLO_MODULE_REPEATS_INSIDE | YOLO_MODULE_CURRENT_HEADS};
const yolo_module_type yolo_c2fcib_type = {"C2fCIB", "C2f with CIB inner blocks (YOLOv10)", c2fcib_build,
                                           c2f_forward, NULL, NULL, YOLO_MODULE_REPEATS_INSIDE};
const yolo_module_type yolo_c2_type = {"C2", "CSP bottleneck with 2 convolutions, bottlenecks on one half",
                                       c2_build, c2_forward, NULL, NULL, YOLO_MODULE_REPEATS_INSIDE};
