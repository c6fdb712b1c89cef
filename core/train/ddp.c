/* The trainer's DDP steps (ddp.h). */
#include "train/ddp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static yolo_status read_file(const char *path, void **data, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return yolo_error(YOLO_ERR_IO, "cannot open checkpoint %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    yolo_status st = YOLO_OK;
    for (;;) {
        if (len == cap) {
            char *grown = realloc(buf, cap = cap ? cap * 2 : 1 << 20);
            if (!grown) {
                st = yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory", path);
                break;
            }
            buf = grown;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0) {
            if (ferror(f)) st = yolo_error(YOLO_ERR_IO, "reading %s: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (st) free(buf), buf = NULL, len = 0;
    *data = buf;
    *size = len;
    return st;
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
        void *data = NULL;
        size_t n = 0;
        yolo_status rs = read_file(name, &data, &n);
        const char *err = rs ? yolo_last_error() : NULL;
        size = 1 + (rs ? strlen(err) + 1 : n);
        blob = malloc(size);
        if (!blob) {
            free(data);
            return yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory", name);
        }
        ((char *)blob)[0] = rs ? 1 : 0;
        memcpy((char *)blob + 1, rs ? err : data, size - 1);
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

yolo_status yolo_ddp_allreduce_grads(yolo_dist *d, yolo_optimizer *opt, yolo_ddp_buckets *b) {
    if (yolo_dist_world(d) == 1) return YOLO_OK;
    double t0 = seconds_now();
    int64_t total = 0;
    for (int i = 0; i < opt->n_params; i++) total += yolo_tensor_numel(opt->params[i]->grad);
    if (total > b->capacity) {
        float *grown = realloc(b->staging, sizeof(float) * (size_t)total);
        if (!grown) return yolo_error(YOLO_ERR_NOMEM, "gradient all-reduce: out of memory for %lld floats", (long long)total);
        b->staging = grown;
        b->capacity = total;
    }
    int64_t bucket = b->bucket > 0 ? b->bucket : total;
    /* last parameters first: a bucket starts as soon as it is full */
    yolo_status st = YOLO_OK;
    int64_t at = 0, started = 0;
    for (int i = opt->n_params - 1; i >= 0 && !st; i--) {
        const yolo_tensor *g = opt->params[i]->grad;
        int64_t n = yolo_tensor_numel(g);
        st = yolo_tensor_download_f32(g, b->staging + at, n);
        at += n;
        if (!st && (at - started >= bucket || i == 0)) {
            st = yolo_dist_allreduce_f32_start(d, b->staging + started, at - started, "allreduce(gradients)");
            started = at;
        }
    }
    yolo_status waited = yolo_dist_wait_all(d);
    if (!st) st = waited;
    at = 0;
    for (int i = opt->n_params - 1; i >= 0 && !st; i--) {
        yolo_tensor *g = opt->params[i]->grad;
        int64_t n = yolo_tensor_numel(g);
        st = yolo_tensor_upload_f32(g, b->staging + at, n);
        at += n;
    }
    b->seconds = seconds_now() - t0;
    return st;
}

void yolo_ddp_buckets_free(yolo_ddp_buckets *b) {
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
