/* yolo/yolo.h — the host API: using a model from a program (a camera
 * service, a robot, a language binding), not writing a task.
 *
 * Open a predictor from a model (a model yaml, a .ckpt or an Ultralytics
 * .pt), give it images in memory or a source path, and read the results
 * as numbers; or run val / train / export with key=value pairs as the
 * `yolo` command line takes them.
 *
 * Keys are given as a NULL-terminated array of "key=value" strings
 * ({"imgsz=320", "conf=0.4", NULL}; a bare bool key such as "half" means
 * half=true). They are checked by the same key table, in the same layers
 * and with the same messages as the command line: an unknown key, an
 * ill-typed or out-of-range value fails with YOLO_ERR_CONFIG naming it.
 *
 * Every function returns a yolo_status (or NULL / 0) and on failure sets
 * yolo_last_error() (yolo/error.h), naming the key, value or file at fault;
 * nothing exits or aborts. The task plugins are found as the `yolo`
 * executable finds them (YOLO_PLUGIN_PATH, then the installed
 * lib/yolo/plugins/).
 *
 * Threads: a predictor is used by one thread at a time; different
 * predictors may run on different threads. Error messages are per thread.
 *
 * Output: predicting prints nothing to stdout (warnings, such as an
 * untrained yaml model, go to stdout/stderr as in the CLI). yolo_run
 * prints what the mode prints on the command line (progress, the val
 * table); verbose=False quiets val's per-class table as it does there. */
#ifndef YOLO_YOLO_H
#define YOLO_YOLO_H

#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"
#include "yolo/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- predicting ---------------------------------------------------------- */

typedef struct yolo_predictor yolo_predictor;
typedef struct yolo_result yolo_result;

/* The channel order of interleaved 8-bit pixels (OpenCV's Mat is BGR). */
typedef enum yolo_pixel_format {
    YOLO_PIXELS_RGB = 0,
    YOLO_PIXELS_BGR = 1,
} yolo_pixel_format;

/* Opens `model` for prediction. task: "detect", "segment", "classify", a
 * plugin's task, or NULL for the model's own (as `yolo predict` takes it).
 * keys: the predict keys a predictor uses (imgsz, conf, iou, max_det,
 * classes, agnostic_nms, half, device, threads, rect, end2end, data),
 * NULL-terminated; may be NULL. Keys of the CLI's file outputs (save,
 * save_txt, project, ...), batch and retina_masks are refused:
 * yolo_run("predict", ...) writes those. A model of another task than
 * `task`, a missing file or a bad key fails here. */
YOLO_API yolo_status yolo_predictor_open(const char *model, const char *task, const char *const *keys,
                                         yolo_predictor **out);
YOLO_API void yolo_predictor_close(yolo_predictor *p);

/* Folds every Conv's batch norm into its convolution, as Ultralytics'
 * model.fuse(): the same predictions up to float rounding, with fewer
 * operations each. Fusing a fused predictor does nothing. */
YOLO_API yolo_status yolo_predictor_fuse(yolo_predictor *p);

/* The task's name ("detect", ...) and the model's classes. Strings are
 * owned by the predictor. class_name: NULL for an index out of range. */
YOLO_API const char *yolo_predictor_task(const yolo_predictor *p);
YOLO_API int yolo_predictor_num_classes(const yolo_predictor *p);
YOLO_API const char *yolo_predictor_class_name(const yolo_predictor *p, int cls);

/* One image in memory: height rows of width pixels, 3 interleaved 8-bit
 * channels in `format`, rows `stride` bytes apart (>= width * 3; padding
 * between rows is skipped). Any size: it is letterboxed (classify: centre
 * cropped) exactly as `yolo predict` does a decoded file, so the results
 * equal the CLI's for the same pixels. *out: free with yolo_result_free. */
YOLO_API yolo_status yolo_predict_image(yolo_predictor *p, const uint8_t *pixels, int width, int height,
                                        size_t stride, yolo_pixel_format format, yolo_result **out);

/* Every image of source (a file, a folder, an archive or a glob pattern,
 * as `yolo predict source=...`), one result each in the source's order
 * (yolo_result_path names the file). A file that does not decode is
 * skipped with a warning on stderr, as in the CLI; none decoding is an
 * error. *results: an array of *n; free with yolo_results_free. */
YOLO_API yolo_status yolo_predict_source(yolo_predictor *p, const char *source, yolo_result ***results, int64_t *n);
YOLO_API void yolo_results_free(yolo_result **results, int64_t n);
YOLO_API void yolo_result_free(yolo_result *r);

/* The file a result came from (yolo_predict_source), NULL for an image in
 * memory; and the image's size in pixels. */
YOLO_API const char *yolo_result_path(const yolo_result *r);
YOLO_API int yolo_result_width(const yolo_result *r);
YOLO_API int yolo_result_height(const yolo_result *r);

/* Boxes (detect, segment, box-based plugin tasks), most confident first,
 * as `yolo predict save_txt=True save_conf=True` lists them: xyxy in the
 * original image's pixels, the confidence and the class. 0 for classify. */
YOLO_API int yolo_result_num_boxes(const yolo_result *r);
/* Box i: any of xyxy[4], conf, cls may be NULL. YOLO_ERR_ARG for i out of range. */
YOLO_API yolo_status yolo_result_box(const yolo_result *r, int i, float xyxy[4], float *conf, int *cls);
/* Box i's class name (the model's names; its number when the model has
 * none, as an untrained yaml), NULL for i out of range. */
YOLO_API const char *yolo_result_box_name(const yolo_result *r, int i);

/* Instance masks (segment; a plugin task with the predict_masks hook):
 * box i's mask at the model's input resolution, the letterboxed image, as
 * Ultralytics' Results.masks.data (retina_masks is not applied): *width x
 * *height bytes, row-major, 1 inside the object, 0 outside, owned by the
 * result. NULL (sizes 0) when the task has no masks or i is out of range. */
YOLO_API const uint8_t *yolo_result_mask(const yolo_result *r, int i, int *width, int *height);
/* The letterbox between the image and the model's input: original pixel
 * (x, y) is input pixel (x * scale_x + pad_x, y * scale_y + pad_y). Any
 * output may be NULL. */
YOLO_API yolo_status yolo_result_letterbox(const yolo_result *r, float *scale_x, float *scale_y, float *pad_x, float *pad_y);
/* Milliseconds the prediction took, as Ultralytics' Results.speed splits
 * them: preprocess (the image to the model's letterboxed input; a file's
 * decoding is not counted), inference (the forward), postprocess (the
 * task's decode and NMS, masks). Any output may be NULL. */
YOLO_API yolo_status yolo_result_speed(const yolo_result *r, double *preprocess_ms, double *inference_ms,
                                       double *postprocess_ms);
/* Box i's mask at the original image's size: yolo_result_width x
 * yolo_result_height bytes into out, each pixel the input mask's at its
 * centre's letterbox position (nearest). YOLO_ERR_ARG for no mask. */
YOLO_API yolo_status yolo_result_mask_original(const yolo_result *r, int i, uint8_t *out);

/* Classification (classify): the probability of each of *nc classes
 * (owned by the result), NULL for other tasks; and the top-k classes,
 * most probable first, into top[k] (k <= 5 or nc). Returns how many. */
YOLO_API const float *yolo_result_probs(const yolo_result *r, int *nc);
YOLO_API int yolo_result_top(const yolo_result *r, int *top, int k);

/* ---- drawing and image files ---------------------------------------------- */

/* What yolo_result_plot leaves out (Ultralytics' Results.plot(conf=False,
 * labels=False, boxes=False, masks=False, probs=False)); 0 draws all. */
enum {
    YOLO_PLOT_NO_CONF = 1,   /* labels "name" instead of "name 0.87" */
    YOLO_PLOT_NO_LABELS = 2, /* box outlines without label tabs */
    YOLO_PLOT_NO_BOXES = 4,  /* no boxes (nor their labels) */
    YOLO_PLOT_NO_MASKS = 8,  /* no mask overlays */
    YOLO_PLOT_NO_PROBS = 16, /* no top-5 list (classify) */
};

/* Results.plot: r drawn onto the image it came from as `yolo predict
 * save=True` draws it (Ultralytics' style: masks filled at alpha 0.5 in the
 * class's palette colour, then boxes with "name 0.87" tabs, the most
 * confident on top; classify's top-5 "name 0.87" at the top-left). pixels:
 * width x height (r's image size) in `format`, rows `stride` bytes apart,
 * as yolo_predict_image takes them; the drawing goes to out in the same
 * format, rows out_stride (>= width * 3) bytes apart; out may be pixels
 * (in place, with out_stride == stride). flags: YOLO_PLOT_NO_* or 0.
 * line_width: the outline width in pixels, <= 0 for Ultralytics' default
 * (max(round((width + height) / 2 * 0.003), 2)). r holds what it draws
 * (names included): its predictor may be closed. YOLO_ERR_ARG names a
 * NULL argument, a size other than r's (or over 32767 a side) or a short
 * stride. */
YOLO_API yolo_status yolo_result_plot(const yolo_result *r, const uint8_t *pixels, int width, int height, size_t stride,
                                      yolo_pixel_format format, int flags, double line_width, uint8_t *out,
                                      size_t out_stride);

/* Decodes an image file (JPEG, PNG, BMP, WebP or TIFF, by content; EXIF
 * orientation applied, as `yolo predict` reads a source) to *width x
 * *height interleaved pixels in `format`, rows width * 3 bytes apart.
 * *pixels: free with yolo_image_data_free. */
YOLO_API yolo_status yolo_image_read(const char *path, yolo_pixel_format format, uint8_t **pixels, int *width,
                                     int *height);
YOLO_API void yolo_image_data_free(uint8_t *pixels);
/* Writes pixels (as yolo_predict_image takes them) to path as JPEG
 * (quality 95; .jpg, .jpeg) or PNG (.png) by its extension, as predict
 * saves its pictures. */
YOLO_API yolo_status yolo_image_write(const char *path, const uint8_t *pixels, int width, int height, size_t stride,
                                      yolo_pixel_format format);

/* ---- val, train, export -------------------------------------------------- */

/* A name -> number map: val's metrics under results.csv's column names
 * ("metrics/precision(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)", ...,
 * then "fitness"). */
typedef struct yolo_metrics yolo_metrics;
YOLO_API int yolo_metrics_count(const yolo_metrics *m);
YOLO_API const char *yolo_metrics_name(const yolo_metrics *m, int i);
YOLO_API double yolo_metrics_value(const yolo_metrics *m, int i);
/* The value of `name` into *value; YOLO_ERR_ARG naming it when absent. */
YOLO_API yolo_status yolo_metrics_get(const yolo_metrics *m, const char *name, double *value);
YOLO_API void yolo_metrics_free(yolo_metrics *m);

/* Training events, Ultralytics' callback names:
 *   "on_train_epoch_end"  after an epoch's batches: train/<loss> of the epoch;
 *   "on_fit_epoch_end"    after its validation and its last.ckpt: the
 *                         results.csv row (train/<loss>, the metrics,
 *                         val/<loss>, fitness; the metrics only on epochs
 *                         that validate);
 *   "on_train_end"        after the final validation: the metrics, fitness.
 * epoch counts from 0, as Ultralytics' trainer.epoch. The map is valid
 * during the call only. Callbacks run on the thread that called yolo_run. */
typedef void (*yolo_callback)(void *user, const char *event, int epoch, const yolo_metrics *metrics);
typedef struct yolo_callbacks yolo_callbacks;
YOLO_API yolo_status yolo_callbacks_new(yolo_callbacks **out);
/* Adds fn for `event` (Ultralytics' add_callback); an event not listed
 * above is YOLO_ERR_ARG naming it. Callbacks of one event run in the
 * order added. */
YOLO_API yolo_status yolo_callbacks_add(yolo_callbacks *cb, const char *event, yolo_callback fn, void *user);
YOLO_API void yolo_callbacks_free(yolo_callbacks *cb);

/* Asks the training that yolo_run is running in this process to stop after
 * its current step, as a SIGINT does: last.ckpt is written (it resumes
 * with resume=True) and yolo_run returns YOLO_ERR_INTERRUPTED. Callable
 * from any thread, a callback included. While training, the run handles
 * SIGINT and SIGTERM the same way (the CLI's graceful stop) and puts the
 * process's previous handlers back when it returns. */
YOLO_API void yolo_train_cancel(void);

/* Runs mode "train", "val", "export", "predict" or "info" with `task`
 * (NULL: as the CLI resolves it) and keys (model=..., data=..., epochs=...),
 * through the same mode functions as `yolo MODE key=value...`, printing
 * what they print. callbacks: train's events (may be NULL). metrics: for
 * val, receives the metrics and fitness (may be NULL; set NULL for other
 * modes). YOLO_ERR_CONFIG for a bad key or value (the CLI's exit 2);
 * training on more than one rank (world=, a device list) needs the CLI
 * under mpirun and is YOLO_ERR_UNSUPPORTED here. */
YOLO_API yolo_status yolo_run(const char *mode, const char *task, const char *const *keys,
                              const yolo_callbacks *callbacks, yolo_metrics **metrics);

/* What this thread's last yolo_run wrote: the run directory train or val
 * made (runs/detect/train2; for train also when it then failed or was
 * cancelled: its weights/last.ckpt is there), or the file export wrote
 * (best.onnx); "" when it wrote none. Valid until the thread's next
 * yolo_run. */
YOLO_API const char *yolo_last_output(void);

#ifdef __cplusplus
}
#endif
#endif
