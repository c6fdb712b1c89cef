/* SIGINT / SIGTERM -> a flag the training loop polls (stop.h). */
#define _POSIX_C_SOURCE 200809L
#include "train/stop.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;
static atomic_bool cancelled; /* yolo_stop_cancel: from any thread, kept across yolo_stop_install */
static struct sigaction old_int, old_term;
static bool installed;

static void on_signal(int sig) {
    if (!stop_signal) stop_signal = sig;
    /* a second signal of either kind ends the process at once */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    static const char msg[] = "\nStopping after this step and saving last.ckpt (Ctrl-C again stops at once)...\n";
    ssize_t unused = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)unused;
}

void yolo_stop_install(void) {
    stop_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    installed = true;
}

void yolo_stop_uninstall(void) {
    if (!installed) return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    installed = false;
}

bool yolo_stop_requested(void) { return stop_signal != 0 || atomic_load(&cancelled); }

void yolo_stop_cancel(bool on) { atomic_store(&cancelled, on); }

const char *yolo_stop_reason(void) {
    return stop_signal ? yolo_stop_signal_name(stop_signal) : atomic_load(&cancelled) ? "yolo_train_cancel" : "a signal";
}

int yolo_stop_signal(void) { return (int)stop_signal; }

const char *yolo_stop_signal_name(int sig) {
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
    }
}
