/* The plot worker (plots.h): one thread that runs plot jobs in order, so
 * drawing and JPEG/PNG encoding never hold up a training step. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "draw/plots.h"
#include "train/train_log.h"

typedef struct plot_job {
    yolo_plot_job_fn fn;
    void *arg;
    void (*free_fn)(void *);
    struct plot_job *next;
} plot_job;

struct yolo_plot_worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    plot_job *head, *tail;
    bool closing;
    double seconds, cpu_seconds;
};

/* Runs a job; its wall time is returned, its CPU time added to *cpu. */
static double run_job(plot_job *j, double *cpu) {
    double t0 = yolo_seconds_now(), c0 = yolo_thread_cpu_seconds();
    if (j->fn(j->arg) != YOLO_OK) fprintf(stderr, "WARNING: plotting failed: %s\n", yolo_last_error());
    if (j->free_fn) j->free_fn(j->arg);
    free(j);
    *cpu += yolo_thread_cpu_seconds() - c0;
    return yolo_seconds_now() - t0;
}

static void *worker_main(void *arg) {
    yolo_plot_worker *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->closing) pthread_cond_wait(&w->wake, &w->lock);
        plot_job *j = w->head;
        if (!j) break;
        w->head = j->next;
        if (!w->head) w->tail = NULL;
        pthread_mutex_unlock(&w->lock);
        double cpu = 0, took = run_job(j, &cpu);
        pthread_mutex_lock(&w->lock);
        w->seconds += took;
        w->cpu_seconds += cpu;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

yolo_status yolo_plot_worker_start(yolo_plot_worker **out) {
    *out = NULL;
    yolo_plot_worker *w = calloc(1, sizeof *w);
    if (!w) return yolo_error(YOLO_ERR_NOMEM, "plot worker: out of memory");
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->wake);
        free(w);
        return yolo_error(YOLO_ERR_NOMEM, "plot worker: cannot start a thread");
    }
    *out = w;
    return YOLO_OK;
}

void yolo_plot_worker_submit(yolo_plot_worker *w, yolo_plot_job_fn fn, void *arg, void (*free_fn)(void *)) {
    plot_job *j = malloc(sizeof *j);
    if (!j) {
        fprintf(stderr, "WARNING: plotting skipped: out of memory\n");
        if (free_fn) free_fn(arg);
        return;
    }
    *j = (plot_job){fn, arg, free_fn, NULL};
    if (!w) {
        double cpu = 0;
        run_job(j, &cpu);
        return;
    }
    pthread_mutex_lock(&w->lock);
    if (w->tail) w->tail->next = j;
    else w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void yolo_plot_worker_finish(yolo_plot_worker *w, bool discard, double *seconds, double *cpu_seconds) {
    if (seconds) *seconds = 0;
    if (cpu_seconds) *cpu_seconds = 0;
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    while (discard && w->head) { /* a run that failed does not wait for its pictures */
        plot_job *j = w->head;
        w->head = j->next;
        if (j->free_fn) j->free_fn(j->arg);
        free(j);
    }
    w->tail = w->head ? w->tail : NULL;
    w->closing = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    if (seconds) *seconds = w->seconds;
    if (cpu_seconds) *cpu_seconds = w->cpu_seconds;
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w);
}
