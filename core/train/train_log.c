/* Progress bar, log lines and results.csv (train_log.h). */
#include "train/train_log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double yolo_seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double yolo_thread_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void yolo_progress_header(FILE *out, int n_items, const char *const *item_names) {
    fprintf(out, "\n%11s%11s", "Epoch", "mem");
    for (int i = 0; i < n_items; i++) fprintf(out, "%11s", item_names[i]);
    fprintf(out, "%11s%11s\n", "Instances", "Size");
}

void yolo_progress_begin(yolo_progress *p, FILE *out, int epoch, int epochs, int64_t total, int n_items,
                         const char *const *item_names) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = isatty(fileno(out));
    p->epoch = epoch;
    p->epochs = epochs;
    p->total = total;
    p->n_items = n_items;
    p->item_names = item_names;
    p->start = yolo_seconds_now();
}

void yolo_progress_update(yolo_progress *p, int64_t done, const float *items, int instances, int size,
                          double memory_gb) {
    double now = yolo_seconds_now();
    bool last = done >= p->total;
    /* a terminal redraws at most 10 times a second; a log gets the final line only */
    if (p->tty ? (!last && now - p->last_print < 0.1) : !last) return;
    p->last_print = now;
    double elapsed = now - p->start;
    double rate = elapsed > 0 ? (double)done / elapsed : 0.0;
    char epoch[32];
    snprintf(epoch, sizeof epoch, "%d/%d", p->epoch + 1, p->epochs);
    fprintf(p->out, "%s%11s%10.2fG", p->tty ? "\r" : "", epoch, memory_gb);
    for (int i = 0; i < p->n_items; i++) fprintf(p->out, "%11.4g", (double)items[i]);
    int width = 20, filled = p->total ? (int)(width * done / p->total) : width;
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    fprintf(p->out, "%11d%11d  %3d%% %s %lld/%lld %.2fit/s %.0fs", instances, size,
            p->total ? (int)(100 * done / p->total) : 100, bar, (long long)done, (long long)p->total, rate, elapsed);
    if (!p->tty) fputc('\n', p->out);
    fflush(p->out);
}

void yolo_progress_end(yolo_progress *p) {
    if (p->tty) fputc('\n', p->out);
    fflush(p->out);
}

static void csv_init(yolo_results_csv *r, const char *run_dir, const yolo_task_hooks *hooks) {
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s/results.csv", run_dir);
    r->n_loss = hooks->n_loss_items;
    r->n_metrics = hooks->n_metrics;
    r->loss_names = hooks->loss_names;
    r->metric_names = hooks->metric_names;
    if (hooks->val_loss_outputs < 0) r->n_loss = -r->n_loss; /* remember: no val losses */
}

/* The header line (with its newline). */
static void csv_header(const yolo_results_csv *r, char *buf, size_t size) {
    int n_loss = r->n_loss < 0 ? -r->n_loss : r->n_loss;
    size_t n = (size_t)snprintf(buf, size, "epoch,time"); /* Ultralytics' columns, in its order */
    for (int i = 0; i < n_loss && n < size; i++) n += (size_t)snprintf(buf + n, size - n, ",train/%s", r->loss_names[i]);
    for (int i = 0; i < r->n_metrics && n < size; i++) n += (size_t)snprintf(buf + n, size - n, ",%s", r->metric_names[i]);
    for (int i = 0; r->n_loss > 0 && i < n_loss && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, ",val/%s", r->loss_names[i]);
    if (n < size) snprintf(buf + n, size - n, ",lr/pg0,lr/pg1,lr/pg2\n");
}

yolo_status yolo_results_csv_open(yolo_results_csv *r, const char *run_dir, const yolo_task_hooks *hooks) {
    csv_init(r, run_dir, hooks);
    char header[4096];
    csv_header(r, header, sizeof header);
    FILE *f = fopen(r->path, "w");
    if (!f) return yolo_error(YOLO_ERR_IO, "%s: cannot create", r->path);
    fputs(header, f);
    return fclose(f) == 0 ? YOLO_OK : yolo_error(YOLO_ERR_IO, "%s: write failed", r->path);
}

yolo_status yolo_results_csv_resume(yolo_results_csv *r, const char *run_dir, const yolo_task_hooks *hooks, int rows,
                                    int *kept) {
    csv_init(r, run_dir, hooks);
    *kept = 0;
    char header[4096], line[8192], tmp[1200];
    csv_header(r, header, sizeof header);
    FILE *in = fopen(r->path, "r");
    /* a run begun before results.csv had its time column keeps its rows, the time left empty */
    const char *after_time = header + strlen("epoch,time");
    bool got = in && fgets(line, sizeof line, in) != NULL;
    bool without_time = got && strncmp(line, "epoch", 5) == 0 && strcmp(line + 5, after_time) == 0;
    if (in && (!got || (strcmp(line, header) != 0 && !without_time))) {
        fclose(in); /* another layout: start it again */
        in = NULL;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", r->path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        if (in) fclose(in);
        return yolo_error(YOLO_ERR_IO, "%s: cannot create", tmp);
    }
    fputs(header, out);
    /* rows after the checkpoint's (a run killed between results.csv and last.ckpt) are dropped */
    while (in && *kept < rows && fgets(line, sizeof line, in)) {
        char *comma = without_time ? strchr(line, ',') : NULL;
        if (comma) fprintf(out, "%.*s,%s", (int)(comma - line), line, comma);
        else fputs(line, out);
        (*kept)++;
    }
    if (in) fclose(in);
    if (fclose(out) != 0) return yolo_error(YOLO_ERR_IO, "%s: write failed", tmp);
    if (rename(tmp, r->path) != 0) return yolo_error(YOLO_ERR_IO, "%s: cannot rename to %s", tmp, r->path);
    return YOLO_OK;
}

yolo_status yolo_results_csv_append(yolo_results_csv *r, int epoch, double seconds, const float *train_items,
                                    const double *metrics, const float *val_items, const float *lr) {
    FILE *f = fopen(r->path, "a");
    if (!f) return yolo_error(YOLO_ERR_IO, "%s: cannot append", r->path);
    int n_loss = r->n_loss < 0 ? -r->n_loss : r->n_loss;
    fprintf(f, "%d,%.6g", epoch + 1, seconds);
    for (int i = 0; i < n_loss; i++) fprintf(f, ",%.5g", (double)train_items[i]);
    for (int i = 0; i < r->n_metrics; i++) fprintf(f, ",%.5g", metrics[i]);
    if (r->n_loss > 0)
        for (int i = 0; i < n_loss; i++) fprintf(f, ",%.5g", (double)val_items[i]);
    fprintf(f, ",%.6g,%.6g,%.6g\n", (double)lr[0], (double)lr[1], (double)lr[2]);
    return fclose(f) == 0 ? YOLO_OK : yolo_error(YOLO_ERR_IO, "%s: write failed", r->path);
}
