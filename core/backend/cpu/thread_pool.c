/* A fixed pool of worker threads for data-parallel loops (thread_pool.h).
 *
 * One job at a time: the caller publishes (fn, arg, n), bumps a generation
 * counter and takes range 0 itself; worker i takes range i. Workers spin a
 * short while on the generation before sleeping on a condition variable, so
 * back-to-back kernels do not pay a futex wake-up each, while an idle pool
 * costs no CPU; while the pool is warm (a graph run) they spin longer.
 * Ranges are a pure function of (n, pool size), so a kernel that needs
 * run-to-run identical results only has to combine its per-range partials
 * in range order. */
#include "backend/cpu/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__) || defined(__arm__)
#define CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define CPU_RELAX() ((void)0)
#endif

/* Turns before sleeping: ~0.1 ms of pauses (longer would steal cores from
 * OpenBLAS), and while warm as many yields again (a few ms: a graph's
 * kernels follow one another closer than that). Measured on bench_train
 * (YOLOv8n amp, 2 threads, 2 cores): warm +1.7% alone; two runs at once
 * each at a cold pool's speed, where warm turns spent in pauses instead of
 * yields made them 4.5x slower. */
#define SPIN_LIMIT 2000
#define SPIN_LIMIT_WARM (SPIN_LIMIT + 2000) /* yields of ~1-2 us each */

typedef struct worker {
    struct yolo_thread_pool *pool;
    int index;
    pthread_t thread;
} worker;

struct yolo_thread_pool {
    int threads;
    int started;            /* worker threads actually running */
    worker *workers;        /* threads-1 entries */

    pthread_mutex_t mutex;
    pthread_cond_t wake;    /* workers wait for a new generation or stop */
    pthread_cond_t done;    /* the caller waits for pending == 0 */
    atomic_uint_fast64_t generation;
    atomic_int pending;     /* workers still busy with the current job */
    atomic_bool stop;
    atomic_bool warm;       /* spin without limit (yolo_thread_pool_set_warm) */
    int sleepers;           /* workers blocked on `wake` (under mutex) */

    /* The current job: written before generation is bumped. */
    yolo_range_fn fn;
    void *arg;
    int64_t n;
    int parts;
};

static int spin_limit(const yolo_thread_pool *pool) {
    return atomic_load_explicit(&pool->warm, memory_order_relaxed) ? SPIN_LIMIT_WARM : SPIN_LIMIT;
}

/* Past the short spin, a warm wait yields the core at every turn: on a
 * machine with more runnable threads than cores the thread it waits for
 * (or another process) runs instead of it. */
static void relax(int spin) {
    if (spin < SPIN_LIMIT)
        CPU_RELAX();
    else
        sched_yield();
}

static void range_of(int64_t n, int parts, int i, int64_t *begin, int64_t *end) {
    *begin = n * i / parts;
    *end = n * (i + 1) / parts;
}

static void finish_one(yolo_thread_pool *pool) {
    if (atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->mutex);
    }
}

static void *worker_main(void *p) {
    worker *w = p;
    yolo_thread_pool *pool = w->pool;
    /* Jobs are counted from 0 at creation: a worker that starts late must
     * still take the first job, so it must not read the current generation. */
    uint_fast64_t seen = 0;
    for (;;) {
        /* Spin first: the next kernel usually follows within microseconds. */
        uint_fast64_t gen = seen;
        for (int spin = 0; spin < spin_limit(pool); spin++) {
            gen = atomic_load_explicit(&pool->generation, memory_order_acquire);
            if (gen != seen || atomic_load_explicit(&pool->stop, memory_order_acquire)) break;
            relax(spin);
        }
        if (gen == seen && !atomic_load_explicit(&pool->stop, memory_order_acquire)) {
            pthread_mutex_lock(&pool->mutex);
            pool->sleepers++;
            while ((gen = atomic_load_explicit(&pool->generation, memory_order_acquire)) == seen &&
                   !atomic_load_explicit(&pool->stop, memory_order_acquire))
                pthread_cond_wait(&pool->wake, &pool->mutex);
            pool->sleepers--;
            pthread_mutex_unlock(&pool->mutex);
        }
        if (atomic_load_explicit(&pool->stop, memory_order_acquire)) break;
        seen = gen;
        if (w->index < pool->parts) {
            int64_t begin, end;
            range_of(pool->n, pool->parts, w->index, &begin, &end);
            if (end > begin) pool->fn(pool->arg, begin, end);
        }
        finish_one(pool);
    }
    return NULL;
}

static void stop_workers(yolo_thread_pool *pool) {
    pthread_mutex_lock(&pool->mutex);
    atomic_store_explicit(&pool->stop, true, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 0; i < pool->started; i++) pthread_join(pool->workers[i].thread, NULL);
    pool->started = 0;
}

yolo_status yolo_thread_pool_create(int threads, yolo_thread_pool **out) {
    if (!out) return yolo_error(YOLO_ERR_ARG, "yolo_thread_pool_create: out is NULL");
    *out = NULL;
    if (threads < 1 || threads > 1024)
        return yolo_error(YOLO_ERR_ARG, "yolo_thread_pool_create: threads=%d is outside [1, 1024]", threads);
    yolo_thread_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return yolo_error(YOLO_ERR_NOMEM, "yolo_thread_pool_create: out of memory");
    pool->threads = threads;
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->pending, 0);
    atomic_init(&pool->stop, false);
    atomic_init(&pool->warm, false);
    if (pthread_mutex_init(&pool->mutex, NULL) != 0) {
        free(pool);
        return yolo_error(YOLO_ERR_NOMEM, "yolo_thread_pool_create: pthread_mutex_init failed");
    }
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    if (threads > 1) {
        pool->workers = calloc((size_t)threads - 1, sizeof *pool->workers);
        if (!pool->workers) {
            yolo_thread_pool_free(pool);
            return yolo_error(YOLO_ERR_NOMEM, "yolo_thread_pool_create: out of memory for %d workers", threads - 1);
        }
        for (int i = 0; i < threads - 1; i++) {
            pool->workers[i].pool = pool;
            pool->workers[i].index = i + 1;
            if (pthread_create(&pool->workers[i].thread, NULL, worker_main, &pool->workers[i]) != 0) {
                yolo_thread_pool_free(pool);
                return yolo_error(YOLO_ERR_NOMEM, "yolo_thread_pool_create: could not start worker %d of %d",
                                  i + 1, threads - 1);
            }
            pool->started++;
        }
    }
    *out = pool;
    return YOLO_OK;
}

void yolo_thread_pool_free(yolo_thread_pool *pool) {
    if (!pool) return;
    stop_workers(pool);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    pthread_mutex_destroy(&pool->mutex);
    free(pool->workers);
    free(pool);
}

int yolo_thread_pool_size(const yolo_thread_pool *pool) { return pool ? pool->threads : 1; }

void yolo_parallel_for(yolo_thread_pool *pool, int64_t n, yolo_range_fn fn, void *arg) {
    if (n <= 0) return;
    int parts = pool ? pool->threads : 1;
    if ((int64_t)parts > n) parts = (int)n;
    if (parts <= 1 || !pool || pool->started == 0) {
        fn(arg, 0, n);
        return;
    }
    pool->fn = fn;
    pool->arg = arg;
    pool->n = n;
    pool->parts = parts;
    /* Every started worker acknowledges the generation, busy or not. */
    atomic_store_explicit(&pool->pending, pool->started, memory_order_relaxed);
    pthread_mutex_lock(&pool->mutex);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
    if (pool->sleepers > 0) pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);

    int64_t begin, end;
    range_of(n, parts, 0, &begin, &end);
    fn(arg, begin, end);

    /* Spin (briefly unless warm), then sleep until the last worker signals. */
    for (int spin = 0; spin < spin_limit(pool); spin++) {
        if (atomic_load_explicit(&pool->pending, memory_order_acquire) == 0) return;
        relax(spin);
    }
    pthread_mutex_lock(&pool->mutex);
    while (atomic_load_explicit(&pool->pending, memory_order_acquire) != 0) pthread_cond_wait(&pool->done, &pool->mutex);
    pthread_mutex_unlock(&pool->mutex);
}

void yolo_thread_pool_set_warm(yolo_thread_pool *pool, bool warm) {
    if (pool) atomic_store_explicit(&pool->warm, warm, memory_order_relaxed);
}

bool yolo_thread_pool_warm(const yolo_thread_pool *pool) {
    return pool && atomic_load_explicit(&pool->warm, memory_order_relaxed);
}
