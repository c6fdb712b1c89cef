/* dynamic=True for the ONNX export (onnx_writer.h): batch, height and
 * width symbolic. The forward is traced at the export size and at three
 * others (batch, height, width changed one at a time); a dim whose value
 * differs between the traces follows the input's size. A Reshape to such
 * a shape gets its target from Shape ops: each varying dim is a dim of an
 * earlier tensor that equals it in every trace, a product of two dims of
 * the reshaped tensor, or one of its dims times or over a constant. The
 * Detect head's anchor points and strides are computed from the input's
 * Shape with Range and Expand, as Ultralytics' make_anchors does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/onnx_writer.h"

static bool is_anchor_constant(const yolo_tensor *t) {
    return t->kind == YOLO_TENSOR_PERSISTENT &&
           (!strcmp(t->name, "detect.anchors") || !strcmp(t->name, "detect.strides"));
}

/* Dim d of t in trace k (0: the base one). */
static int64_t dim_in(const writer *w, const yolo_tensor *t, int d, int k) {
    if (k == 0 || t->kind == YOLO_TENSOR_PERSISTENT || t->graph != w->base) return t->shape[d];
    const yolo_tensor *o = w->alt[k - 1]->nodes[t->node->index];
    return d < o->ndim ? o->shape[d] : -1;
}

bool ox_dim_varies(const writer *w, const yolo_tensor *t, int d) {
    if (!w->dynamic) return false;
    if (t->kind == YOLO_TENSOR_PERSISTENT) return is_anchor_constant(t) && d == t->ndim - 1;
    for (int k = 1; k <= w->n_alt; k++)
        if (dim_in(w, t, d, k) != t->shape[d]) return true;
    return false;
}

bool ox_shape_varies(const writer *w, const yolo_tensor *t) {
    for (int d = 0; d < t->ndim; d++)
        if (ox_dim_varies(w, t, d)) return true;
    return false;
}

/* dims[k] of every trace equal dim d of t in every trace */
static bool same_dim(const writer *w, const yolo_tensor *t, int d, const int64_t *want) {
    if (d >= t->ndim) return false;
    for (int k = 0; k <= w->n_alt; k++)
        if (dim_in(w, t, d, k) != want[k]) return false;
    return true;
}

/* base + suffix into name[NAME_MAX_LEN]; false, and the export failed, if
 * that is too long (node names are NAME_MAX_LEN - 1 bytes at most). */
static bool suffixed(writer *w, char name[NAME_MAX_LEN], const char *base, const char *suffix) {
    int n = snprintf(name, NAME_MAX_LEN, "%s%s", base, suffix);
    if (n >= 0 && n < NAME_MAX_LEN) return true;
    ox_fail(w, YOLO_ERR_UNSUPPORTED, "dynamic=True: the name '%s%s' is longer than %d bytes", base, suffix,
            NAME_MAX_LEN - 1);
    return false;
}

/* Gather(Shape(x), [d]) into out: a 1-D int64 of one element. */
static void shape_dim(writer *w, const char *x, int64_t d, const char *out) {
    char shape[NAME_MAX_LEN], idx[NAME_MAX_LEN];
    if (!suffixed(w, shape, out, "_shape")) return;
    ox_node(w, "Shape", &x, 1, shape, NULL);
    ox_const_i64(w, &d, 1, idx, sizeof idx);
    const char *in[2] = {shape, idx};
    pb_buf a = {0};
    ox_attr_int(&a, "axis", 0);
    ox_node(w, "Gather", in, 2, out, &a);
}

static void binary(writer *w, const char *op, const char *a, const char *b, const char *out) {
    const char *in[2] = {a, b};
    ox_node(w, op, in, 2, out, NULL);
}

/* One varying dim of a reshape target into `out`; false if no source. */
static bool resolve_dim(writer *w, const yolo_tensor *src, const int64_t *want, int before, const char *out) {
    const char *sname = ox_find_name(w, src);
    for (int d = 0; sname && d < src->ndim; d++)
        if (same_dim(w, src, d, want)) {
            shape_dim(w, sname, d, out);
            return true;
        }
    for (int j = before - 1; j >= 0; j--) {
        const yolo_tensor *t = w->base->nodes[j];
        const char *name = ox_find_name(w, t);
        for (int d = 0; name && d < t->ndim; d++)
            if (same_dim(w, t, d, want)) {
                shape_dim(w, name, d, out);
                return true;
            }
    }
    if (!sname) return false;
    /* A name that does not fit fails the export (ox_fail keeps that first
     * error over the caller's "no way" one). */
    char a[NAME_MAX_LEN], b[NAME_MAX_LEN], c[NAME_MAX_LEN];
    if (!suffixed(w, a, out, "_a") || !suffixed(w, b, out, "_b")) return false;
    for (int d = 0; d < src->ndim; d++)
        for (int e = d + 1; e < src->ndim; e++) {
            bool ok = true;
            for (int k = 0; ok && k <= w->n_alt; k++) ok = dim_in(w, src, d, k) * dim_in(w, src, e, k) == want[k];
            if (!ok) continue;
            shape_dim(w, sname, d, a);
            shape_dim(w, sname, e, b);
            binary(w, "Mul", a, b, out);
            return true;
        }
    for (int d = 0; d < src->ndim; d++) {
        int64_t s0 = dim_in(w, src, d, 0);
        bool times = s0 > 0 && want[0] % s0 == 0, over = want[0] > 0 && s0 % want[0] == 0;
        int64_t f = times ? want[0] / s0 : over ? s0 / want[0] : 0;
        for (int k = 1; f && k <= w->n_alt; k++) {
            int64_t s = dim_in(w, src, d, k);
            if (times ? s * f != want[k] : s != want[k] * f) f = 0;
        }
        if (!f) continue;
        shape_dim(w, sname, d, a);
        ox_const_i64(w, &f, 1, c, sizeof c);
        binary(w, times ? "Mul" : "Div", a, c, out);
        return true;
    }
    return false;
}

void ox_dynamic_reshape(writer *w, const yolo_tensor *t, const char *x, const char *out, int index) {
    const yolo_tensor *src = t->node->src[0];
    char dims[YOLO_MAX_DIMS][NAME_MAX_LEN];
    const char *parts[YOLO_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        int64_t want[4];
        for (int k = 0; k <= w->n_alt; k++) want[k] = dim_in(w, t, d, k);
        parts[d] = dims[d];
        if (!ox_dim_varies(w, t, d)) {
            ox_const_i64(w, &t->shape[d], 1, dims[d], sizeof dims[d]);
            continue;
        }
        snprintf(dims[d], sizeof dims[d], "/t%d_dim%d", index, d);
        if (!resolve_dim(w, src, want, t->node->index, dims[d])) {
            ox_fail(w, YOLO_ERR_UNSUPPORTED, "dynamic=True: dim %d of '%s' (node %d, %lld at the export size) "
                    "follows the input's size in no way this export can compute", d, t->name, index,
                    (long long)t->shape[d]);
            return;
        }
    }
    char shape[NAME_MAX_LEN];
    snprintf(shape, sizeof shape, "/t%d_target", index);
    pb_buf a = {0};
    ox_attr_int(&a, "axis", 0);
    ox_node(w, "Concat", parts, t->ndim, shape, &a);
    binary(w, "Reshape", x, shape, out);
}

/* ---- the Detect head's anchors ---- */

/* Temporary names of the anchor subgraph: "/anchors<level>_<tag>". */
typedef char name_buf[NAME_MAX_LEN];

static char *tmp_name(name_buf out, int level, const char *tag) {
    snprintf(out, NAME_MAX_LEN, "/anchors%d_%s", level, tag);
    return out;
}

static const char *with_const_i64(writer *w, const char *op, const char *x, const int64_t *v, int n, name_buf out) {
    char c[NAME_MAX_LEN];
    if (v) ox_const_i64(w, v, n, c, sizeof c);
    else { /* the empty shape: Reshape to a scalar */
        static const int64_t none = 0;
        int64_t zero = 0;
        snprintf(c, sizeof c, "/const_%d", w->n_consts++);
        ox_initializer(w, c, ELEM_INT64, 1, &zero, &none, 0);
    }
    binary(w, op, x, c, out);
    return out;
}

/* The level's cell centres along one side: Range(offset, n + offset, 1)
 * with n = ceil(size / stride), the size of the level's map; n into count. */
static const char *centres(writer *w, const char *size, int64_t stride, float offset, const char *tag, int level,
                           name_buf count, name_buf out) {
    name_buf up, f, end, end0;
    int64_t s1 = stride - 1;
    char tg[24];
    snprintf(tg, sizeof tg, "%s_up", tag);
    with_const_i64(w, "Add", size, &s1, 1, tmp_name(up, level, tg));
    snprintf(tg, sizeof tg, "%s_n", tag);
    with_const_i64(w, "Div", up, &stride, 1, tmp_name(count, level, tg));
    pb_buf a = {0};
    ox_attr_int(&a, "to", ELEM_FLOAT);
    snprintf(tg, sizeof tg, "%s_f", tag);
    ox_node(w, "Cast", (const char *const[]){count}, 1, tmp_name(f, level, tg), &a);
    char c[NAME_MAX_LEN], start[NAME_MAX_LEN], delta[NAME_MAX_LEN];
    int64_t one = 1;
    float one_f = 1.0f;
    ox_const_f32(w, &offset, 1, &one, c, sizeof c);
    snprintf(tg, sizeof tg, "%s_end", tag);
    binary(w, "Add", f, c, tmp_name(end, level, tg));
    snprintf(tg, sizeof tg, "%s_end0", tag);
    with_const_i64(w, "Reshape", end, NULL, 0, tmp_name(end0, level, tg));
    ox_const_f32(w, &offset, 0, NULL, start, sizeof start);
    ox_const_f32(w, &one_f, 0, NULL, delta, sizeof delta);
    ox_node(w, "Range", (const char *const[]){start, end0, delta}, 3, tmp_name(out, level, tag), NULL);
    return out;
}

/* The base trace's constants are checked against the formula first. */
static bool anchors_match(const float *xy, const float *st, int64_t total, const int64_t *stride, int nl, int64_t H,
                          int64_t W, float offset) {
    int64_t k = 0;
    for (int l = 0; l < nl; l++) {
        int64_t h = (H + stride[l] - 1) / stride[l], wd = (W + stride[l] - 1) / stride[l];
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < wd; x++, k++)
                if (k >= total || xy[k] != (float)x + offset || xy[total + k] != (float)y + offset ||
                    st[k] != (float)stride[l])
                    return false;
    }
    return k == total;
}

static void build_anchors(writer *w, const yolo_tensor *anchors, const yolo_tensor *strides) {
    int64_t total = anchors->shape[1];
    float *xy = malloc(sizeof(float) * (size_t)(3 * total));
    if (!xy || yolo_tensor_download_f32(anchors, xy, 2 * total) ||
        yolo_tensor_download_f32(strides, xy + 2 * total, total)) {
        free(xy);
        ox_fail(w, YOLO_ERR_BACKEND, "dynamic=True: cannot read the Detect head's anchors");
        return;
    }
    int64_t stride[8];
    int nl = 0;
    for (int64_t k = 0; k < total && nl < 8; k++)
        if (!nl || (float)stride[nl - 1] != xy[2 * total + k]) stride[nl++] = (int64_t)xy[2 * total + k];
    float offset = xy[0];
    bool ok = anchors_match(xy, xy + 2 * total, total, stride, nl, w->images->shape[2], w->images->shape[3], offset);
    free(xy);
    if (!ok) {
        ox_fail(w, YOLO_ERR_UNSUPPORTED, "dynamic=True: the Detect head's anchors are not make_anchors' grid");
        return;
    }
    name_buf xy_l[8], st_l[8];
    const char *xy_names[8], *st_names[8];
    int64_t two = 2, three = 3;
    char hname[NAME_MAX_LEN] = "/anchors_H", wname[NAME_MAX_LEN] = "/anchors_W";
    shape_dim(w, "images", two, hname);
    shape_dim(w, "images", three, wname);
    for (int l = 0; l < nl; l++) {
        name_buf nh, nw, cx, cy, hw, gx, gy, ex, ey, fx, fy, sshape;
        centres(w, wname, stride[l], offset, "x", l, nw, cx);
        centres(w, hname, stride[l], offset, "y", l, nh, cy);
        pb_buf a = {0}, b = {0};
        ox_attr_int(&a, "axis", 0);
        ox_node(w, "Concat", (const char *const[]){nh, nw}, 2, tmp_name(hw, l, "hw"), &a);
        int64_t row[2] = {1, -1}, col[2] = {-1, 1};
        with_const_i64(w, "Reshape", cx, row, 2, tmp_name(gx, l, "x_row"));
        with_const_i64(w, "Reshape", cy, col, 2, tmp_name(gy, l, "y_col"));
        binary(w, "Expand", gx, hw, tmp_name(ex, l, "gx"));
        binary(w, "Expand", gy, hw, tmp_name(ey, l, "gy"));
        with_const_i64(w, "Reshape", ex, row, 2, tmp_name(fx, l, "x_flat"));
        with_const_i64(w, "Reshape", ey, row, 2, tmp_name(fy, l, "y_flat"));
        ox_attr_int(&b, "axis", 0);
        ox_node(w, "Concat", (const char *const[]){fx, fy}, 2, tmp_name(xy_l[l], l, "xy"), &b);
        char sc[NAME_MAX_LEN];
        float s = (float)stride[l];
        int64_t one_one[2] = {1, 1};
        ox_const_f32(w, &s, 2, one_one, sc, sizeof sc);
        ox_node(w, "Shape", (const char *const[]){fx}, 1, tmp_name(sshape, l, "sshape"), NULL);
        binary(w, "Expand", sc, sshape, tmp_name(st_l[l], l, "stride"));
        xy_names[l] = xy_l[l];
        st_names[l] = st_l[l];
    }
    pb_buf a = {0}, b = {0};
    ox_attr_int(&a, "axis", 1);
    ox_attr_int(&b, "axis", 1);
    ox_node(w, "Concat", xy_names, nl, "/anchors", &a);
    ox_node(w, "Concat", st_names, nl, "/anchor_strides", &b);
    ox_add_name(w, anchors, "/anchors");
    ox_add_name(w, strides, "/anchor_strides");
    w->dyn_built = true;
}

const char *ox_dynamic_constant(writer *w, const yolo_tensor *t) {
    if (!is_anchor_constant(t)) return NULL;
    if (!w->dyn_built) {
        /* both are built at once: find the other one among the graph's constants */
        const yolo_tensor *other = NULL;
        for (int i = 0; i < w->base->n_nodes && !other; i++) {
            const yolo_tensor *n = w->base->nodes[i];
            for (int s = 0; s < n->node->n_src && !other; s++) {
                const yolo_tensor *c = n->node->src[s];
                if (c != t && is_anchor_constant(c) && strcmp(c->name, t->name)) other = c;
            }
        }
        if (!other) {
            ox_fail(w, YOLO_ERR_UNSUPPORTED, "dynamic=True: '%s' without its pair", t->name);
            return "";
        }
        bool is_anchors = !strcmp(t->name, "detect.anchors");
        build_anchors(w, is_anchors ? t : other, is_anchors ? other : t);
        if (w->st) return "";
    }
    return ox_find_name(w, t);
}
