/* A fixed pool of worker threads for data-parallel loops.
 * The calling thread takes part, so a pool of 1 thread spawns nothing. */
#ifndef YOLO_THREAD_POOL_H
#define YOLO_THREAD_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "yolo/error.h"

typedef struct yolo_thread_pool yolo_thread_pool;

yolo_status yolo_thread_pool_create(int threads, yolo_thread_pool **out);
void yolo_thread_pool_free(yolo_thread_pool *pool);
int yolo_thread_pool_size(const yolo_thread_pool *pool);

/* Calls fn(arg, begin, end) over [0, n) split into contiguous ranges, one
 * per thread (at most n ranges), and waits for all. Not reentrant: call it
 * from one thread at a time, never from inside fn. */
typedef void (*yolo_range_fn)(void *arg, int64_t begin, int64_t end);
void yolo_parallel_for(yolo_thread_pool *pool, int64_t n, yolo_range_fn fn, void *arg);

/* While warm, idle workers (and a caller waiting for them) spin ~1-2 ms
 * instead of ~0.1 ms before sleeping: for the length of a graph run, whose
 * kernels follow one another with gaps a futex wake-up would double. Not
 * while something else needs the cores (OpenBLAS's own threads). */
void yolo_thread_pool_set_warm(yolo_thread_pool *pool, bool warm);
bool yolo_thread_pool_warm(const yolo_thread_pool *pool);

#endif
