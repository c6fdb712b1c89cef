/* Data warnings: one sink, replaceable by the trainer's logger or a test. */
#include "data/warn.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static yolo_warning_fn handler;
static void *handler_user;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void yolo_data_set_warning_handler(yolo_warning_fn fn, void *user) {
    pthread_mutex_lock(&lock);
    handler = fn;
    handler_user = user;
    pthread_mutex_unlock(&lock);
}

void yolo_data_warn(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&lock);
    if (handler)
        handler(handler_user, msg);
    else
        fprintf(stderr, "warning: %s\n", msg);
    pthread_mutex_unlock(&lock);
}
