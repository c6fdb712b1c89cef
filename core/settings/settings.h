/* Typed settings: the merged configuration read once, per concern.
 *
 * The core never looks a key up by name where it uses it: the modes fill
 * these structs from the merged configuration (yolo_settings_read), each
 * concern checked in one place, and pass the structs on. Which key feeds
 * which field is one table (settings_table.c, yolo_settings_keys): every
 * key of default.yaml has a row there, either naming the field that reads
 * it or saying who else reads it (the CLI, the run-directory naming, task
 * plugins through their context's config) or that it is accepted but not
 * implemented yet. tests/test_settings.c checks the table covers
 * default.yaml.
 *
 * What each key accepts (type, range, choices, a text's grammar such as
 * device's) is core/cfg/keys.c's, checked as each value is parsed, from
 * whichever layer it comes, and listed by `yolo help KEY`; the checks of
 * yolo_settings_read are those a range cannot state (whole batches,
 * stride multiples), and freeze's layer count is checked once the model
 * is built (train/freeze.c).
 *
 * Strings are borrowed from the configuration: fill after the last merge
 * (the checkpoint, data and model yamls) and do not merge again while the
 * settings are in use. */
#ifndef YOLO_SETTINGS_H
#define YOLO_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "backend/amp_format.h"
#include "data/augment.h"
#include "data/data_config.h"
#include "yolo/config.h"

/* Read before a run's checkpoint is merged: the ranks to start and the
 * checkpoint to resume (train). */
typedef struct yolo_launch_settings {
    int world;                  /* world */
    double dist_timeout;        /* dist_timeout, seconds */
    yolo_config_value resume;   /* resume: false, true or a checkpoint path */
    const char *model;          /* model (NULL when null) */
    const char *project;        /* project (NULL: runs/<task>) */
} yolo_launch_settings;

/* What every mode needs to open a session: data, model, size, device. */
typedef struct yolo_run_settings {
    const char *model, *data, *device; /* NULL when null */
    int workers, threads;
    yolo_config_value imgsz_given; /* imgsz= as given: an integer or [h, w] */
    int imgsz;                     /* derived: the integer, or max(h, w) (train and val take one size) */
    int imgsz_h, imgsz_w;          /* derived: [h, w], or imgsz twice (predict and export) */
    yolo_config_value batch_given; /* batch= as given: images, or AutoBatch's -1 / 0 / fraction */
    int batch;                     /* derived: images (0 while AutoBatch has not chosen) */
    double autobatch;              /* derived: AutoBatch's memory fraction, 0: off */
    int64_t seed;
    bool profile;               /* the per-op timing table at the end (the backend's YOLO_PROFILE) */
    yolo_config_value amp_given; /* amp= as given: true, false, fp16, bf16 or fp32 */
    yolo_amp_format amp;         /* derived: what to ask of the backend (yolo_backend_set_amp_format) */
} yolo_run_settings;

/* The optimizer and the learning-rate schedule (train). */
typedef struct yolo_optim_settings {
    const char *optimizer;      /* auto, SGD, AdamW, ... */
    double lr0, lrf, momentum, weight_decay;
    double warmup_epochs, warmup_momentum, warmup_bias_lr;
    bool cos_lr;
    int nbs;
    int epochs, patience;
    double time;                /* hours: overrides epochs once the first epoch is timed (0: off) */
    yolo_config_value freeze;   /* an int N (layers 0..N-1) or a list of layer indices; null: none */
    double cls_pw;              /* class weights' power in [0, 1] (train/class_weights.h); 0: none */
} yolo_optim_settings;

/* The train loader: its augmentations (data/augment.h) and cache. */
typedef struct yolo_loader_settings {
    yolo_augment_params augment; /* imgsz from the run settings */
    yolo_config_value cache;     /* cache: false, true, ram or disk */
    bool cache_ram;              /* derived: cache=true or cache=ram */
    double fraction;             /* train on the first round(n * fraction) images */
    bool rect;                   /* rectangular batches sorted by aspect ratio (shuffle and mosaic off) */
    yolo_config_value multi_scale_given; /* multi_scale: false, true or a fraction */
    double multi_scale;          /* derived: sizes in [1 - f, 1 + f] x imgsz; 0 off, true 0.5 (Ultralytics 8.3) */
    const char *copy_paste_mode; /* flip or mixup: augment.copy_paste_mode */
    const char *auto_augment;    /* randaugment, autoaugment, augmix or NULL: augment.auto_augment */
} yolo_loader_settings;

/* Checkpoints written by train and the weights it starts from. */
typedef struct yolo_checkpoint_settings {
    bool save;
    int save_period;              /* -1: off */
    bool half;                    /* half */
    bool half_best;               /* derived: best.ckpt in fp16 unless half=false is given */
    yolo_config_value pretrained; /* true, false or a checkpoint path to fine-tune from */
} yolo_checkpoint_settings;

/* Validation: after each epoch (train) and `yolo val`. */
typedef struct yolo_val_settings {
    bool val;                   /* validate every epoch */
    const char *split_name;     /* split */
    yolo_split split;           /* derived */
} yolo_val_settings;

typedef struct yolo_predict_settings {
    const char *source;         /* NULL when null */
    bool save_txt;              /* labels/<stem>.txt per image */
} yolo_predict_settings;

/* The pictures of train, val and predict (draw/, train/run_plots.h,
 * train/predict_pictures.h). */
typedef struct yolo_picture_settings {
    bool plots;                  /* train and val: the run's plots */
    bool save_json;              /* val: COCO predictions.json */
    bool save, save_crop;        /* predict: the drawn images, the crops */
    bool show_labels, show_conf, show_boxes, retina_masks;
} yolo_picture_settings;

/* DDP settings read with the rest of train's (after the merge). */
typedef struct yolo_dist_settings {
    double bucket_mb;           /* dist_bucket_mb */
    bool sync_bn;
} yolo_dist_settings;

typedef struct yolo_settings {
    yolo_run_settings run;
    yolo_optim_settings optim;
    yolo_loader_settings loader;
    yolo_checkpoint_settings checkpoint;
    yolo_val_settings val;
    yolo_predict_settings predict;
    yolo_dist_settings dist;
    yolo_picture_settings pictures;
} yolo_settings;

/* The concerns, as bits: which structs a mode fills. */
typedef enum yolo_settings_concern {
    YOLO_SETTINGS_LAUNCH = 1u << 0,
    YOLO_SETTINGS_RUN = 1u << 1,
    YOLO_SETTINGS_OPTIM = 1u << 2,
    YOLO_SETTINGS_LOADER = 1u << 3,
    YOLO_SETTINGS_CHECKPOINT = 1u << 4,
    YOLO_SETTINGS_VAL = 1u << 5,
    YOLO_SETTINGS_PREDICT = 1u << 6,
    YOLO_SETTINGS_DIST = 1u << 7,
    YOLO_SETTINGS_PICTURES = 1u << 8,
} yolo_settings_concern;

#define YOLO_SETTINGS_TRAIN                                                                                    \
    (YOLO_SETTINGS_RUN | YOLO_SETTINGS_OPTIM | YOLO_SETTINGS_LOADER | YOLO_SETTINGS_CHECKPOINT |              \
     YOLO_SETTINGS_VAL | YOLO_SETTINGS_DIST | YOLO_SETTINGS_PICTURES)

/* ---- the key table ---- */

/* What happens to a key of default.yaml. */
typedef enum yolo_key_use {
    YOLO_KEY_SETTING,         /* read into a settings field (this table drives the read) */
    YOLO_KEY_CORE,            /* read by the core outside the settings (`reader` says where) */
    YOLO_KEY_TASK_PLUGIN,     /* not read by the core: task plugins read it through their context's config */
    YOLO_KEY_REFUSED,         /* any value but the default is an error */
} yolo_key_use;

/* How a YOLO_KEY_SETTING row stores its value. */
typedef enum yolo_setting_kind {
    YOLO_SETTING_INT,    /* int */
    YOLO_SETTING_INT64,  /* int64_t */
    YOLO_SETTING_DOUBLE, /* double */
    YOLO_SETTING_FLOAT,  /* float */
    YOLO_SETTING_BOOL,   /* bool */
    YOLO_SETTING_STRING, /* const char *, NULL when null */
    YOLO_SETTING_VALUE,  /* yolo_config_value (its string or list borrowed) */
} yolo_setting_kind;

typedef struct yolo_key_reader {
    const char *key;
    yolo_key_use use;
    yolo_settings_concern concern; /* YOLO_KEY_SETTING: the struct */
    size_t offset;                 /* YOLO_KEY_SETTING: the field's offset in it */
    yolo_setting_kind kind;
    const char *reader;            /* "yolo_optim_settings.lr0", or who reads it, or why not */
} yolo_key_reader;

/* Rows in default.yaml's order; a key may have several (read at launch and
 * again after the merge). */
extern const yolo_key_reader yolo_settings_keys[];
extern const int yolo_settings_key_count;

/* The rows of `key` from *index on (start with 0); NULL after the last. */
const yolo_key_reader *yolo_settings_find_key(const char *key, int *index);

/* Fills the structs of `concerns` from cfg (table rows only, no checks). */
yolo_status yolo_settings_fill(const yolo_config *cfg, unsigned concerns, yolo_settings *out);
/* The launch settings (a struct apart: read before the checkpoint merge). */
yolo_status yolo_settings_fill_launch(const yolo_config *cfg, yolo_launch_settings *out);
/* An error for the first REFUSED row of rows[0..n) whose key holds
 * another value than default.yaml's (naming the key, value and source). */
yolo_status yolo_settings_check_refused(const yolo_config *cfg, const yolo_key_reader *rows, int n);
/* One warning line on `log` for each key of the table's task-plugin rows
 * (YOLO_KEY_TASK_PLUGIN) that holds another value than default.yaml's and
 * is not among keys_read[0..n), the keys the run's task reads: it has no
 * effect on that task (Ultralytics ignores it silently). Nothing when
 * keys_read is NULL (the task does not say). */
void yolo_settings_warn_unread_task_keys(const yolo_config *cfg, const char *task, const char *const *keys_read,
                                         int n, FILE *log);
/* One warning line on `log` for each of keys[0..n) that holds another
 * value than default.yaml's: "key=value (source) has no effect: why". */
void yolo_settings_warn_no_effect(const yolo_config *cfg, const char *const *keys, int n, const char *why, FILE *log);
/* yolo_settings_check_refused over the table, yolo_settings_fill, then
 * each concern's checks and derived fields (errors name the key, its value
 * and where it came from). */
yolo_status yolo_settings_read(const yolo_config *cfg, unsigned concerns, yolo_settings *out);

#endif
