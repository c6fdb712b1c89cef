/* Helpers for the op tests (reference and gradient checks): a graph whose
 * inputs are queued for upload until it is planned, downloads into malloc'd
 * host arrays, and tolerance checks that print what failed.
 * Header-only (static inline) so each test stays one source file. */
#ifndef YOLO_TEST_UTIL_OPS_H
#define YOLO_TEST_UTIL_OPS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "yolo/graph.h"

#define OPS_MAX_UPLOADS 32

typedef struct ops_graph {
    yolo_backend *be;
    yolo_graph *g;
    int n_up;
    yolo_tensor *up[OPS_MAX_UPLOADS];
    void *up_data[OPS_MAX_UPLOADS]; /* owned copies */
    size_t up_bytes[OPS_MAX_UPLOADS];
} ops_graph;

static inline void ops_begin(ops_graph *o, yolo_backend *be) {
    memset(o, 0, sizeof *o);
    o->be = be;
    o->g = yolo_graph_new(be);
}

static inline void ops_end(ops_graph *o) {
    for (int i = 0; i < o->n_up; i++) free(o->up_data[i]);
    yolo_graph_free(o->g);
    o->g = NULL;
    o->n_up = 0;
}

static inline int64_t ops_numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

/* A graph input of any dtype whose raw bytes are uploaded by ops_run. */
static inline yolo_tensor *ops_input_raw(ops_graph *o, const char *name, yolo_dtype dt, int ndim,
                                         const int64_t *shape, const void *data) {
    yolo_tensor *t = yolo_graph_input(o->g, name, dt, ndim, shape);
    if (!t || o->n_up == OPS_MAX_UPLOADS) return NULL;
    size_t bytes = yolo_tensor_bytes(t);
    o->up[o->n_up] = t;
    o->up_data[o->n_up] = malloc(bytes ? bytes : 1);
    memcpy(o->up_data[o->n_up], data, bytes);
    o->up_bytes[o->n_up] = bytes;
    o->n_up++;
    return t;
}

static inline yolo_tensor *ops_input(ops_graph *o, const char *name, int ndim, const int64_t *shape,
                                     const float *data) {
    return ops_input_raw(o, name, YOLO_F32, ndim, shape, data);
}

/* Marks the given outputs, plans, uploads the queued inputs, runs. */
static inline yolo_status ops_run(ops_graph *o, int n_out, yolo_tensor *const *outs) {
    if (yolo_graph_status(o->g) != YOLO_OK) {
        fprintf(stderr, "graph build failed: %s\n", yolo_graph_error(o->g));
        return yolo_graph_status(o->g);
    }
    yolo_graph_plan_info info;
    for (int i = 0; i < n_out; i++) {
        yolo_status st = yolo_graph_mark_output(o->g, outs[i]);
        if (st) return st;
    }
    yolo_status st = yolo_graph_plan(o->g, &info);
    for (int i = 0; st == YOLO_OK && i < o->n_up; i++) st = yolo_tensor_upload(o->up[i], o->up_data[i], o->up_bytes[i]);
    if (st == YOLO_OK) st = yolo_graph_run(o->g);
    if (st != YOLO_OK) fprintf(stderr, "graph run failed: %s\n", yolo_last_error());
    return st;
}

/* A malloc'd f32 copy of t (NULL on failure). */
static inline float *ops_download(const yolo_tensor *t) {
    int64_t n = yolo_tensor_numel(t);
    float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    if (d && yolo_tensor_download_f32(t, d, n) != YOLO_OK) {
        fprintf(stderr, "download of '%s' failed: %s\n", t->name, yolo_last_error());
        free(d);
        return NULL;
    }
    return d;
}

static inline float *ops_random(int64_t n, uint64_t seed, float lo, float hi) {
    float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    test_fill_uniform(d, n, seed, lo, hi);
    return d;
}

/* Compares got against ref within |got-ref| <= atol + rtol*|ref|; on failure
 * prints the worst element. Counts a failure; returns 1 when it passed. */
static inline int ops_expect_close(const char *what, const float *got, const double *ref, int64_t n, double atol,
                                   double rtol) {
    double worst = 0;
    int64_t at = -1;
    if (!got) {
        fprintf(stderr, "FAIL %s: no result\n", what);
        test_failures++;
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]) / (atol + rtol * fabs(ref[i]));
        if (isnan(got[i]) != isnan(ref[i]) || (isinf(got[i]) && got[i] != ref[i])) e = INFINITY;
        else if ((double)got[i] == ref[i]) e = 0; /* exact, also for zero tolerances and infinities */
        if (!(e <= worst)) {
            worst = e;
            at = i;
        }
    }
    if (worst > 1.0 || isnan(worst)) {
        fprintf(stderr, "FAIL %s: element %lld is %.9g, expected %.9g (error %.3g of tolerance)\n", what,
                (long long)at, (double)got[at], ref[at], worst);
        test_failures++;
        return 0;
    }
    return 1;
}

/* Shape as text, "[2,3,4]". */
static inline const char *ops_shape_str(char *buf, size_t size, int ndim, const int64_t *shape) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, size - k, "[");
    for (int i = 0; i < ndim && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}

#endif
