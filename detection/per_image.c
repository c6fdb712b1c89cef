/* yolo_det_for_each_image (yolo/detection.h): the loss and the assignment of a batch run image
 * by image, in parallel while the device waits for the gradients. Threads
 * are started per call: ~20 us each against milliseconds of work per image.
 * Each image's part is written to its own slots and the caller sums them in
 * image order, so results are bit-identical for any thread count. */
#include "yolo/detection.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64

typedef struct per_image_job {
    yolo_det_image_fn fn;
    void *arg;
    int batch, threads;
    yolo_status *status; /* [batch] */
    char (*message)[256]; /* [batch]: the failing image's message (thread-local there) */
} per_image_job;

typedef struct worker {
    per_image_job *job;
    int index;
} worker;

static void run_images(per_image_job *j, int index) {
    /* contiguous blocks: image b on thread b * threads / batch */
    int begin = (int)((long long)j->batch * index / j->threads);
    int end = (int)((long long)j->batch * (index + 1) / j->threads);
    for (int b = begin; b < end; b++) {
        j->status[b] = j->fn(j->arg, b);
        if (j->status[b]) snprintf(j->message[b], sizeof j->message[b], "%s", yolo_last_error());
    }
}

static void *worker_main(void *p) {
    worker *w = p;
    run_images(w->job, w->index);
    return NULL;
}

static int thread_count(int batch) {
    const char *v = getenv("YOLO_LOSS_THREADS");
    long n = v && *v ? strtol(v, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    return n < batch ? (int)n : batch;
}

yolo_status yolo_det_for_each_image(int batch, yolo_det_image_fn fn, void *arg) {
    if (batch <= 0) return YOLO_OK;
    per_image_job j = {fn, arg, batch, thread_count(batch), calloc((size_t)batch, sizeof(yolo_status)),
                       calloc((size_t)batch, sizeof *j.message)};
    if (!j.status || !j.message) {
        free(j.status), free(j.message);
        return yolo_error(YOLO_ERR_NOMEM, "detection loss: out of memory for %d images", batch);
    }
    pthread_t tid[MAX_THREADS];
    worker w[MAX_THREADS];
    int started = 0;
    for (int k = 1; k < j.threads; k++) {
        w[k] = (worker){&j, k};
        if (pthread_create(&tid[k], NULL, worker_main, &w[k]) != 0) break;
        started = k;
    }
    /* this thread runs block 0, and the blocks of threads that did not start */
    run_images(&j, 0);
    for (int k = started + 1; k < j.threads; k++) run_images(&j, k);
    for (int k = 1; k <= started; k++) pthread_join(tid[k], NULL);
    yolo_status st = YOLO_OK;
    for (int b = 0; b < batch && !st; b++)
        if (j.status[b]) st = yolo_error(j.status[b], "%s", j.message[b]);
    free(j.status), free(j.message);
    return st;
}
