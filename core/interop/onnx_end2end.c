/* onnx_end2end.c — the ONNX form of YOLO26's end2end output: Ultralytics'
 * Detect.postprocess after the decoded one-to-one branch, so the exported
 * model gives output0 [B, k, 6] (x1 y1 x2 y2 score class, best first) as
 * Ultralytics' export of an end2end model does and needs no NMS. A head
 * with per-anchor extras after the scores (Segment26's mask coefficients)
 * gets them gathered for the same anchors: [B, k, 6 + extra], as
 * Segment.postprocess.
 *
 * From pred [B, 4 + nc, A] (xywh, scores): boxes to xyxy; the k anchors of
 * highest best-class score (TopK); their k x nc scores gathered and the k
 * best (anchor, class) pairs taken (TopK again); anchor = pair / nc, class =
 * pair % nc; the boxes gathered. yolo_e2e_select is the same selection on
 * the host. */
#include <stdio.h>

#include "interop/onnx_end2end.h"

#define NAME 48

/* A fresh value name into out. */
static const char *fresh(writer *w, char *out) {
    snprintf(out, NAME, "/e2e_%d", w->n_nodes);
    return out;
}

static void node1(writer *w, const char *op, const char *a, const char *b, const char *out, pb_buf *attrs) {
    const char *in[2] = {a, b};
    ox_node(w, op, in, b ? 2 : 1, out, attrs);
}

/* x[..., start:end] along axis, into a fresh name. */
static void slice(writer *w, const char *x, int64_t axis, int64_t start, int64_t end, char *out) {
    ox_slice(w, x, axis, start, end, fresh(w, out));
}

/* x with a new axis at `axis` (Unsqueeze's axes: an attribute before opset 13, an input since). */
static void unsqueeze(writer *w, const char *x, int64_t axis, char *out) {
    if (w->opset >= 13) {
        char a[NAME];
        ox_const_i64(w, &axis, 1, a, sizeof a);
        node1(w, "Unsqueeze", x, a, fresh(w, out), NULL);
    } else {
        pb_buf attrs = {0};
        ox_attr_ints(&attrs, "axes", &axis, 1);
        node1(w, "Unsqueeze", x, NULL, fresh(w, out), &attrs);
    }
}

/* TopK along the last axis, largest first: values and indices. */
static void topk(writer *w, const char *x, int64_t k, char *values, char *indices) {
    char kname[NAME];
    ox_const_i64(w, &k, 1, kname, sizeof kname);
    pb_buf n = {0}, attrs = {0};
    ox_attr_int(&attrs, "axis", -1);
    ox_attr_int(&attrs, "largest", 1);
    ox_attr_int(&attrs, "sorted", 1);
    snprintf(values, NAME, "/e2e_topk_values_%d", w->n_nodes);
    snprintf(indices, NAME, "/e2e_topk_indices_%d", w->n_nodes);
    pb_string_field(&n, NODE_INPUT, x);
    pb_string_field(&n, NODE_INPUT, kname);
    pb_string_field(&n, NODE_OUTPUT, values);
    pb_string_field(&n, NODE_OUTPUT, indices);
    char name[NAME];
    snprintf(name, sizeof name, "/TopK_%d", w->n_nodes++);
    pb_string_field(&n, NODE_NAME, name);
    pb_string_field(&n, NODE_OP_TYPE, "TopK");
    pb_append(&n, &attrs);
    pb_message_field(&w->graph, GRAPH_NODE, &n);
}

/* rows [B, k] of x [B, A, c] at index [B, k] (int64): GatherElements with the index repeated over c. */
static void gather_rows(writer *w, const char *x, const char *index, int64_t c, char *out) {
    char u[NAME], reps[NAME], tiled[NAME];
    unsqueeze(w, index, 2, u);
    const int64_t r[3] = {1, 1, c};
    ox_const_i64(w, r, 3, reps, sizeof reps);
    node1(w, "Tile", u, reps, fresh(w, tiled), NULL);
    pb_buf attrs = {0};
    ox_attr_int(&attrs, "axis", 1);
    node1(w, "GatherElements", x, tiled, fresh(w, out), &attrs);
}

void ox_end2end_postprocess(writer *w, const char *pred, int nc, int extra, int64_t k, const char *out) {
    char t[NAME], xywh[NAME], scores[NAME], xy[NAME], wh[NAME], half[NAME], c05[NAME], x1y1[NAME], x2y2[NAME],
        boxes[NAME], best[NAME];
    pb_buf attrs = {0};
    const int64_t perm[3] = {0, 2, 1};
    ox_attr_ints(&attrs, "perm", perm, 3);
    node1(w, "Transpose", pred, NULL, fresh(w, t), &attrs); /* [B, A, 4 + nc] */
    slice(w, t, 2, 0, 4, xywh);
    slice(w, t, 2, 4, 4 + nc, scores);
    slice(w, xywh, 2, 0, 2, xy);
    slice(w, xywh, 2, 2, 4, wh);
    const float h = 0.5f;
    const int64_t one = 1;
    ox_const_f32(w, &h, 1, &one, c05, sizeof c05);
    node1(w, "Mul", wh, c05, fresh(w, half), NULL);
    node1(w, "Sub", xy, half, fresh(w, x1y1), NULL);
    node1(w, "Add", xy, half, fresh(w, x2y2), NULL);
    attrs = (pb_buf){0};
    ox_attr_int(&attrs, "axis", 2);
    node1(w, "Concat", x1y1, x2y2, fresh(w, boxes), &attrs); /* [B, A, 4] xyxy */
    attrs = (pb_buf){0};
    const int64_t last = 2;
    ox_attr_ints(&attrs, "axes", &last, 1);
    ox_attr_int(&attrs, "keepdims", 0);
    node1(w, "ReduceMax", scores, NULL, fresh(w, best), &attrs); /* [B, A] */
    char v1[NAME], anchors[NAME], cand[NAME], flat[NAME], v2[NAME], pairs[NAME], ncc[NAME], ai[NAME], cls[NAME],
        anchor[NAME], kboxes[NAME], s3[NAME], c3[NAME], cf[NAME];
    topk(w, best, k, v1, anchors);            /* the k anchors of highest best-class score */
    gather_rows(w, scores, anchors, nc, cand); /* [B, k, nc] */
    const int64_t fs[2] = {0, -1};
    ox_reshape(w, cand, 2, fs, fresh(w, flat)); /* [B, k * nc] */
    topk(w, flat, k, v2, pairs);                                  /* the k best (anchor, class) pairs */
    const int64_t n = nc;
    ox_const_i64(w, &n, 1, ncc, sizeof ncc);
    node1(w, "Div", pairs, ncc, fresh(w, ai), NULL);
    node1(w, "Mod", pairs, ncc, fresh(w, cls), NULL);
    attrs = (pb_buf){0};
    ox_attr_int(&attrs, "axis", 1);
    node1(w, "GatherElements", anchors, ai, fresh(w, anchor), &attrs);
    gather_rows(w, boxes, anchor, 4, kboxes); /* [B, k, 4] */
    unsqueeze(w, v2, 2, s3);
    unsqueeze(w, cls, 2, c3);
    attrs = (pb_buf){0};
    ox_attr_int(&attrs, "to", ELEM_FLOAT);
    node1(w, "Cast", c3, NULL, fresh(w, cf), &attrs);
    attrs = (pb_buf){0};
    ox_attr_int(&attrs, "axis", 2);
    char extras[NAME], kextras[NAME];
    if (extra > 0) {
        slice(w, t, 2, 4 + nc, 4 + nc + extra, extras);
        gather_rows(w, extras, anchor, extra, kextras); /* [B, k, extra] */
    }
    const char *parts[4] = {kboxes, s3, cf, kextras};
    ox_node(w, "Concat", parts, extra > 0 ? 4 : 3, out, &attrs); /* [B, k, 6 + extra] */
}
