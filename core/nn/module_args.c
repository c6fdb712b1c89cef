/* Argument and output helpers shared by the core module types
 * (modules_core.c, modules_csp.c, modules_attention.c). */
#include <stdio.h>

#include "nn/model_internal.h"

static void format_arg(const yolo_arg *a, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    switch (a->kind) {
    case YOLO_ARG_NULL: snprintf(buf, size, "None"); break;
    case YOLO_ARG_BOOL: snprintf(buf, size, "%s", a->b ? "True" : "False"); break;
    case YOLO_ARG_INT: snprintf(buf, size, "%lld", (long long)a->i); break;
    case YOLO_ARG_FLOAT: snprintf(buf, size, "%g", a->f); break;
    case YOLO_ARG_STRING: snprintf(buf, size, "'%s'", a->s); break;
    case YOLO_ARG_ACT: snprintf(buf, size, "%s", a->s); break;
    case YOLO_ARG_LIST:
        len += (size_t)snprintf(buf, size, "[");
        for (int i = 0; i < a->n_items && len < size; i++) {
            char item[64];
            format_arg(&a->items[i], item, sizeof(item));
            len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", item);
        }
        if (len < size) snprintf(buf + len, size - len, "]");
        break;
    }
}

const char *module_args_tail(const yolo_module_ctx *ctx, int start, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = start; i < yolo_module_arg_count(ctx) && len < size; i++) {
        char item[96];
        format_arg(yolo_module_arg(ctx, i), item, sizeof(item));
        len += (size_t)snprintf(buf + len, size - len, ", %s", item);
    }
    return buf;
}

yolo_status module_out_channels_arg(yolo_module_ctx *ctx, int *c2) {
    int64_t v;
    if (yolo_module_arg_count(ctx) < 1)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "the first argument (output channels) is missing");
    yolo_status st = yolo_module_arg_int(ctx, 0, 0, &v);
    if (st) return st;
    if (v < 1 || v > 65536) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "output channels %lld out of range", (long long)v);
    *c2 = yolo_module_scale_channels(ctx, (int)v);
    return YOLO_OK;
}

yolo_status module_single_input(yolo_module_ctx *ctx, int *c1) {
    if (yolo_module_n_inputs(ctx) != 1)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "takes one input, 'from' lists %d", yolo_module_n_inputs(ctx));
    *c1 = yolo_module_in_channels(ctx, 0);
    return YOLO_OK;
}

yolo_status module_one_output(yolo_module_outputs *out, yolo_tensor *y) {
    out->n = 1;
    out->t[0] = y;
    return y ? YOLO_OK : YOLO_ERR_SHAPE; /* the graph holds the message */
}

void *module_alloc(yolo_module_ctx *ctx, size_t size) {
    void *state = yolo_module_state(ctx);
    void *p = yolo_module_state_alloc(ctx, size);
    ctx->state = state;
    return p;
}

bool module_join_name(yolo_module_ctx *ctx, char *buf, size_t size, const char *name, const char *leaf) {
    int n = snprintf(buf, size, "%s%s%s", name && *name ? name : "", name && *name ? "." : "", leaf);
    if (n < 0 || (size_t)n >= size) {
        yolo_module_error(ctx, YOLO_ERR_ARG, "parameter name '%s.%s' is too long", name, leaf);
        return false;
    }
    return true;
}

yolo_status module_conv_at(yolo_module_ctx *ctx, yolo_conv_block *b, const char *name, const char *leaf, int c1, int c2,
                           int k, int s, int p, int g, yolo_act act) {
    char full[YOLO_NAME_MAX];
    if (!module_join_name(ctx, full, sizeof(full), name, leaf)) return YOLO_ERR_ARG;
    return yolo_conv_block_init(ctx, b, full, c1, c2, k, s, p, g, 1, act);
}

yolo_status module_finish_repeated(yolo_module_ctx *ctx, int c1, int c2, int n, int tail_from) {
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d, %d%s]", c1, c2, n, module_args_tail(ctx, tail_from, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

yolo_status module_split_chain_concat(const yolo_forward_ctx *f, const yolo_conv_block *cv1,
                                      const yolo_conv_block *cv2, yolo_tensor *x, int half, module_block_fn block,
                                      const void *blocks, size_t block_size, int n, yolo_module_outputs *out) {
    yolo_tensor *ab[2];
    yolo_tensor *y = yolo_conv_block_forward(f, cv1, x);
    if (!y || !yolo_chunk(f->graph, y, 2, 1, ab)) return module_one_output(out, NULL);
    for (int i = 0; ab[half] && i < n; i++) ab[half] = block(f, (const char *)blocks + (size_t)i * block_size, ab[half]);
    return module_one_output(out, ab[half] ? yolo_conv_block_forward(f, cv2, yolo_concat(f->graph, 2, ab, 1)) : NULL);
}
