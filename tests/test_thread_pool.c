/* The CPU backend's thread pool (backend/cpu/thread_pool.h): every element
 * of a range visited exactly once over many back-to-back jobs, cold and
 * warm, for pool sizes 1 to 4 and ranges shorter than the pool; a warm pool
 * spins longer after a job than a cold one (a graph run's gaps), and both
 * then sleep, measured by the process's CPU time over an idle wait; and a
 * graph run leaves the pool cold again. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/thread_pool.h"
#include "test_util.h"

typedef struct count_job {
    atomic_int *hits;
} count_job;

static void count_range(void *arg, int64_t begin, int64_t end) {
    count_job *j = arg;
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&j->hits[i], 1);
}

static void test_coverage(void) {
    enum { N = 1000 };
    atomic_int hits[N];
    for (int threads = 1; threads <= 4; threads++) {
        yolo_thread_pool *pool = NULL;
        CHECK(yolo_thread_pool_create(threads, &pool) == YOLO_OK);
        for (int warm = 0; warm < 2; warm++) {
            yolo_thread_pool_set_warm(pool, warm);
            CHECK(yolo_thread_pool_warm(pool) == (warm && pool));
            for (int64_t n = 1; n <= N; n += n < 8 ? 1 : 97) {
                for (int rep = 0; rep < 20; rep++) {
                    for (int64_t i = 0; i < n; i++) atomic_init(&hits[i], 0);
                    count_job j = {hits};
                    yolo_parallel_for(pool, n, count_range, &j);
                    int bad = 0;
                    for (int64_t i = 0; i < n; i++) bad += atomic_load(&hits[i]) != 1;
                    CHECK_MSG(bad == 0, "%d threads, warm %d, n %lld: %d elements not visited once", threads, warm,
                              (long long)n, bad);
                }
            }
        }
        yolo_thread_pool_set_warm(pool, true); /* freeing a warm pool stops its spinning workers */
        yolo_thread_pool_free(pool);
    }
    CHECK(!yolo_thread_pool_warm(NULL));
    yolo_thread_pool_set_warm(NULL, true); /* no pool: nothing to do */
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The process's CPU seconds over `ms` of this thread sleeping after a job. */
static double idle_cpu(yolo_thread_pool *pool, int ms) {
    atomic_int hits[2];
    atomic_init(&hits[0], 0), atomic_init(&hits[1], 0);
    count_job j = {hits};
    yolo_parallel_for(pool, 2, count_range, &j);
    double t0 = cpu_seconds();
    struct timespec d = {0, ms * 1000000L};
    nanosleep(&d, NULL);
    return cpu_seconds() - t0;
}

static void test_idle_cost(void) {
    yolo_thread_pool *pool = NULL;
    CHECK(yolo_thread_pool_create(2, &pool) == YOLO_OK);
    /* warm: the worker spins 2000 pauses and 2000 yields (a few ms), cold
     * 2000 pauses (~0.1 ms), then both sleep: neither costs a core idle.
     * A yield returns at once or after another thread's slice, so one trial
     * can show little spin on a busy machine: up to five trials, and the
     * warm pool must out-spin the cold one in at least one of them. */
    double warm = 0, cold = 0;
    bool longer = false;
    for (int trial = 0; trial < 5 && !longer; trial++) {
        yolo_thread_pool_set_warm(pool, true);
        warm = idle_cpu(pool, 100);
        yolo_thread_pool_set_warm(pool, false);
        cold = idle_cpu(pool, 100);
        CHECK_MSG(warm < 0.03, "a warm pool used %.3f s of CPU over 100 ms idle", warm);
        longer = warm > 3 * cold && warm > 2e-4;
    }
    CHECK_MSG(longer, "after a job a warm pool spun %.6f s, a cold one %.6f s (5 trials)", warm, cold);
    printf("idle 100 ms after a job: warm %.6f s CPU, cold %.6f s\n", warm, cold);
    yolo_thread_pool_free(pool);
}

/* A CPU graph run warms the backend's pool only while it runs. */
static void test_graph_run_leaves_cold(void) {
    yolo_backend *be = NULL;
    CHECK(yolo_backend_create("cpu", 2, &be) == YOLO_OK);
    if (!be) return;
    yolo_graph *g = yolo_graph_new(be);
    int64_t shape[1] = {100000};
    yolo_tensor *x = test_tensor_random(be, "x", 1, shape, 1, -1, 1, 0);
    yolo_tensor *y = yolo_silu(g, x);
    CHECK(y && yolo_graph_run(g) == YOLO_OK);
    const yolo_cpu_context *ctx = be->impl;
    CHECK_MSG(ctx->pool && !yolo_thread_pool_warm(ctx->pool), "a graph run left the backend's pool warm");
    yolo_graph_free(g);
    yolo_tensor_free(x);
    yolo_backend_free(be);
}

int main(void) {
    test_coverage();
    test_idle_cost();
    test_graph_run_leaves_cold();
    return test_result("test_thread_pool");
}
