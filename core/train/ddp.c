/* The trainer's DDP steps (ddp.h). */
#include "train/ddp.h"

#include "data/fsutil.h"
#include "yolo/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

yolo_status yolo_ddp_share_string(yolo_dist *d, char *text, size_t size, const char *what) {
    if (yolo_dist_world(d) == 1) return YOLO_OK;
    return yolo_dist_broadcast(d, text, (int64_t)size, what);
}

yolo_status yolo_ddp_read_checkpoint(yolo_dist *d, const char *path, yolo_ckpt **out) {
    *out = NULL;
    if (yolo_dist_world(d) == 1) return yolo_ckpt_read(path, out);
    /* rank 0: [0][bytes] or [1][error text]; every rank parses the same bytes */
    char name[1024] = "";
    snprintf(name, sizeof name, "%s", path ? path : "");
    yolo_status st = yolo_ddp_share_string(d, name, sizeof name, "broadcast(checkpoint name)");
    if (st) return st;
    void *blob = NULL;
    size_t size = 0;
    if (yolo_dist_rank(d) == 0) {
        uint8_t *data = NULL;
        size_t n = 0;
        yolo_status rs = yolo_read_file(name, &data, &n);
        const char *err = rs ? yolo_last_error() : NULL;
        size = 1 + (rs ? strlen(err) + 1 : n);
        blob = malloc(size);
        if (!blob) {
            free(data);
            return yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory", name);
        }
        ((char *)blob)[0] = rs ? 1 : 0;
        memcpy((char *)blob + 1, rs ? (const void *)err : (const void *)data, size - 1);
        free(data);
    }
    st = yolo_dist_broadcast_blob(d, &blob, &size, "broadcast(checkpoint)");
    if (!st && size > 0 && ((char *)blob)[0] == 0)
        st = yolo_ckpt_read_memory((char *)blob + 1, size - 1, name, out);
    else if (!st)
        st = yolo_error(YOLO_ERR_IO, "rank 0 could not read the checkpoint: %.*s", (int)(size > 1 ? size - 1 : 0),
                        (char *)blob + 1);
    free(blob);
    return st;
}

yolo_status yolo_ddp_broadcast_model(yolo_dist *d, yolo_model *model, const char *what) {
    if (yolo_dist_world(d) == 1) return YOLO_OK;
    int n = yolo_model_tensor_count(model);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += yolo_tensor_bytes(yolo_model_tensor_at(model, i)->tensor);
    char *buf = malloc(total ? total : 1);
    if (!buf) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for %zu bytes", what, total);
    yolo_status st = YOLO_OK;
    size_t at = 0;
    for (int i = 0; i < n && !st && yolo_dist_rank(d) == 0; i++) {
        const yolo_tensor *t = yolo_model_tensor_at(model, i)->tensor;
        st = yolo_tensor_download(t, buf + at, yolo_tensor_bytes(t));
        at += yolo_tensor_bytes(t);
    }
    st = yolo_dist_agree(d, st, what);
    if (!st) st = yolo_dist_broadcast(d, buf, (int64_t)total, what);
    at = 0;
    for (int i = 0; i < n && !st && yolo_dist_rank(d) != 0; i++) {
        yolo_tensor *t = yolo_model_tensor_at(model, i)->tensor;
        st = yolo_tensor_upload(t, buf + at, yolo_tensor_bytes(t));
        at += yolo_tensor_bytes(t);
    }
    free(buf);
    return st;
}

/* The pack graph (gradients, last parameter first, into one flat tensor)
 * and the unpack graph (a flat input written back into the gradients). */
static yolo_status build_transfer(yolo_optimizer *opt, yolo_ddp_buckets *b) {
    yolo_backend *be = opt->backend;
    int n = opt->n_params;
    yolo_tensor **parts = malloc(sizeof *parts * (size_t)(n ? n : 1));
    if (!parts) return yolo_error(YOLO_ERR_NOMEM, "gradient all-reduce: out of memory");
    b->total = 0;
    for (int i = 0; i < n; i++) b->total += yolo_tensor_numel(opt->params[i]->grad);
    b->pack = yolo_graph_new(be);
    b->unpack = yolo_graph_new(be);
    yolo_status st = b->pack && b->unpack ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "gradient all-reduce: out of memory");
    if (!st) {
        for (int k = 0; k < n; k++) {
            yolo_tensor *g = opt->params[n - 1 - k]->grad;
            parts[k] = yolo_reshape(b->pack, g, 1, (int64_t[]){yolo_tensor_numel(g)});
        }
        b->packed = yolo_concat(b->pack, n, parts, 0);
        b->unpacked = yolo_graph_input(b->unpack, "summed gradients", YOLO_F32, 1, &b->total);
        int64_t at = 0;
        for (int k = 0; k < n; k++) {
            yolo_tensor *g = opt->params[n - 1 - k]->grad;
            int64_t m = yolo_tensor_numel(g);
            yolo_zero(b->unpack, g);
            yolo_accumulate(b->unpack, g, yolo_reshape(b->unpack, yolo_slice(b->unpack, b->unpacked, 0, at, m), g->ndim,
                                                       g->shape));
            at += m;
        }
        st = yolo_graph_status(b->pack);
        if (!st) st = yolo_graph_mark_output(b->pack, b->packed); /* downloaded after the run */
        if (!st) st = yolo_graph_status(b->unpack);
        if (!st) st = yolo_graph_plan(b->pack, NULL);
        if (!st) st = yolo_graph_plan(b->unpack, NULL);
    }
    free(parts);
    if (!st && !(b->staging = malloc(sizeof(float) * (size_t)(b->total ? b->total : 1))))
        st = yolo_error(YOLO_ERR_NOMEM, "gradient all-reduce: out of memory for %lld floats", (long long)b->total);
    return st ? yolo_error_context(st, "gradient all-reduce") : YOLO_OK;
}

yolo_status yolo_ddp_allreduce_grads(yolo_dist *d, yolo_optimizer *opt, yolo_ddp_buckets *b) {
    if (yolo_dist_world(d) == 1 || opt->n_params == 0) return YOLO_OK;
    double t0 = seconds_now();
    yolo_status st = b->pack ? YOLO_OK : build_transfer(opt, b);
    if (!st) st = yolo_graph_run(b->pack);
    if (!st) st = yolo_tensor_download_f32(b->packed, b->staging, b->total);
    /* every rank reaches the reduction, so a local failure cannot leave the others waiting */
    double t1 = seconds_now();
    st = yolo_dist_agree(d, st, "packing gradients");
    int64_t bucket = b->bucket > 0 ? b->bucket : b->total;
    for (int64_t at = 0; at < b->total && !st; at += bucket)
        st = yolo_dist_allreduce_f32_start(d, b->staging + at, b->total - at < bucket ? b->total - at : bucket,
                                           "allreduce(gradients)");
    yolo_status waited = yolo_dist_wait_all(d);
    if (!st) st = waited;
    double t2 = seconds_now();
    if (!st) st = yolo_tensor_upload_f32(b->unpacked, b->staging, b->total);
    if (!st) st = yolo_graph_run(b->unpack);
    b->seconds = seconds_now() - t0;
    b->copy_seconds = b->seconds - (t2 - t1);
    return st;
}

void yolo_ddp_buckets_free(yolo_ddp_buckets *b) {
    yolo_graph_free(b->pack);
    yolo_graph_free(b->unpack);
    free(b->staging);
    memset(b, 0, sizeof *b);
}

yolo_status yolo_ddp_rank_mean(const yolo_task_context *ctx, double *values, int n) {
    yolo_dist *d = ctx->dist;
    if (yolo_dist_world(d) == 1) return YOLO_OK;
    yolo_status st = yolo_dist_allreduce_f64(d, values, n, YOLO_DIST_SUM, "allreduce(loss normaliser)");
    for (int i = 0; i < n && !st; i++) values[i] /= yolo_dist_world(d);
    return st;
}
