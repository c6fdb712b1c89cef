/* Graceful stop of a training run on SIGINT / SIGTERM.
 *
 * While installed, the first SIGINT or SIGTERM only records the signal
 * (and says so on stderr); the trainer polls yolo_stop_requested() after
 * every step, writes last.ckpt and returns YOLO_ERR_INTERRUPTED. The
 * handler restores the default action of both signals as it runs, so a
 * second Ctrl-C ends the process at once. The CLI maps
 * YOLO_ERR_INTERRUPTED to 128 + yolo_stop_signal() (130, 143). */
#ifndef YOLO_TRAIN_STOP_H
#define YOLO_TRAIN_STOP_H

#include <stdbool.h>

/* Installs the handlers (and clears a previous request). */
void yolo_stop_install(void);
/* Puts back the handlers that were there before yolo_stop_install. */
void yolo_stop_uninstall(void);
bool yolo_stop_requested(void);
/* The signal that asked for the stop (SIGINT, SIGTERM), 0 if none. */
int yolo_stop_signal(void);
/* The host API's cancel (yolo_train_cancel, from any thread): true asks
 * for the same stop as a SIGINT; it stays asked until set false (the host
 * API clears it when a training starts and ends), so a cancel during
 * setup stops after the first step. */
void yolo_stop_cancel(bool on);
/* What asked for the stop, for messages: "SIGINT", "SIGTERM" or "yolo_train_cancel". */
const char *yolo_stop_reason(void);
/* "SIGINT", "SIGTERM", ... */
const char *yolo_stop_signal_name(int sig);

#endif
