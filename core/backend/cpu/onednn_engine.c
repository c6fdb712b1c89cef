#include "backend/cpu/onednn_engine.h"

#include <dlfcn.h>
#include <dnnl_debug.h>
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dnnl_engine_t engine;
static void (*omp_set_threads)(int); /* libgomp's omp_set_num_threads, loaded with libdnnl */
static pthread_once_t omp_once = PTHREAD_ONCE_INIT;

/* libgomp is a dependency of libdnnl, so it is loaded; looking it up avoids
 * linking OpenMP into libyolo just for one call. */
static void find_omp(void) { omp_set_threads = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads"); }

yolo_status yolo_onednn_engine(dnnl_engine_t *out) {
    pthread_mutex_lock(&lock);
    dnnl_status_t s = engine ? dnnl_success : dnnl_engine_create(&engine, dnnl_cpu, 0);
    *out = engine;
    pthread_mutex_unlock(&lock);
    if (s != dnnl_success)
        return yolo_error(YOLO_ERR_BACKEND, "oneDNN: CPU engine creation failed (%s)", dnnl_status2str(s));
    return YOLO_OK;
}

void yolo_onednn_set_threads(int threads) {
    pthread_once(&omp_once, find_omp);
    if (omp_set_threads) omp_set_threads(threads);
}
