/* Filling the settings from the merged configuration (settings.h): the
 * table's SETTING rows store each value, then each concern is checked and
 * its derived fields set, in one place. Ranges (epochs >= 1, fraction in
 * (0, 1], ...) and a text's grammar (device) are core/cfg/keys.c's, checked
 * as each value is parsed, from whichever layer; the checks here are those
 * a range cannot state (whole batches, stride multiples, cache=disk). */
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "data/augment_policies.h"
#include "settings/settings.h"

static yolo_status read_row(const yolo_config *cfg, const yolo_key_reader *row, char *field) {
    yolo_status st = YOLO_OK;
    int64_t i = 0;
    double f = 0;
    switch (row->kind) {
    case YOLO_SETTING_INT:
        st = yolo_config_get_int(cfg, row->key, &i);
        *(int *)field = (int)i;
        break;
    case YOLO_SETTING_INT64:
        st = yolo_config_get_int(cfg, row->key, &i);
        *(int64_t *)field = i;
        break;
    case YOLO_SETTING_DOUBLE: /* 0 when null (time) */
        if (!yolo_config_is_null(cfg, row->key)) st = yolo_config_get_float(cfg, row->key, &f);
        *(double *)field = f;
        break;
    case YOLO_SETTING_FLOAT:
        st = yolo_config_get_float(cfg, row->key, &f);
        *(float *)field = (float)f;
        break;
    case YOLO_SETTING_BOOL: st = yolo_config_get_bool(cfg, row->key, (bool *)field); break;
    case YOLO_SETTING_STRING:
        *(const char **)field = NULL;
        if (!yolo_config_is_null(cfg, row->key)) st = yolo_config_get_string(cfg, row->key, (const char **)field);
        break;
    case YOLO_SETTING_VALUE: st = yolo_config_get(cfg, row->key, (yolo_config_value *)field); break;
    }
    return st;
}

/* Where a concern's struct lives. */
static char *concern_base(yolo_settings_concern c, yolo_settings *s, yolo_launch_settings *launch) {
    switch (c) {
    case YOLO_SETTINGS_LAUNCH: return (char *)launch;
    case YOLO_SETTINGS_RUN: return s ? (char *)&s->run : NULL;
    case YOLO_SETTINGS_OPTIM: return s ? (char *)&s->optim : NULL;
    case YOLO_SETTINGS_LOADER: return s ? (char *)&s->loader : NULL;
    case YOLO_SETTINGS_CHECKPOINT: return s ? (char *)&s->checkpoint : NULL;
    case YOLO_SETTINGS_VAL: return s ? (char *)&s->val : NULL;
    case YOLO_SETTINGS_PREDICT: return s ? (char *)&s->predict : NULL;
    case YOLO_SETTINGS_DIST: return s ? (char *)&s->dist : NULL;
    case YOLO_SETTINGS_PICTURES: return s ? (char *)&s->pictures : NULL;
    }
    return NULL;
}

static yolo_status fill_rows(const yolo_config *cfg, unsigned concerns, yolo_settings *s, yolo_launch_settings *launch) {
    for (int k = 0; k < yolo_settings_key_count; k++) {
        const yolo_key_reader *row = &yolo_settings_keys[k];
        if (row->use != YOLO_KEY_SETTING || !(row->concern & concerns)) continue;
        char *base = concern_base(row->concern, s, launch);
        if (!base) continue;
        yolo_status st = read_row(cfg, row, base + row->offset);
        if (st) return st;
    }
    return YOLO_OK;
}

yolo_status yolo_settings_fill(const yolo_config *cfg, unsigned concerns, yolo_settings *out) {
    memset(out, 0, sizeof *out);
    yolo_augment_defaults(&out->loader.augment);
    return fill_rows(cfg, concerns & ~(unsigned)YOLO_SETTINGS_LAUNCH, out, NULL);
}

yolo_status yolo_settings_fill_launch(const yolo_config *cfg, yolo_launch_settings *out) {
    memset(out, 0, sizeof *out);
    return fill_rows(cfg, YOLO_SETTINGS_LAUNCH, NULL, out);
}

/* ---- each concern's checks and derived fields ---- */

/* batch: a number of images (a whole number >= 1), or Ultralytics'
 * AutoBatch: -1 or 0 for 60% of the device's memory, a fraction in (0, 1)
 * for that much (train/autobatch.c chooses the batch). */
static yolo_status check_batch(yolo_run_settings *r) {
    const yolo_config_value *b = &r->batch_given;
    double v = b->kind == YOLO_VALUE_INT ? (double)b->i : b->kind == YOLO_VALUE_FLOAT ? b->f : 16;
    r->batch = 0;
    r->autobatch = 0;
    if (v >= 1 && v == floor(v) && v <= INT32_MAX) r->batch = (int)v;
    else if (v <= 0) r->autobatch = 0.6;
    else if (v < 1) r->autobatch = v;
    else
        return yolo_error(YOLO_ERR_CONFIG, "batch=%g: a batch of 1 or more images must be a whole number "
                          "(a number in (0, 1) is AutoBatch's memory fraction)", v);
    return YOLO_OK;
}

/* imgsz: an integer, or Ultralytics' [h, w] (predict and export letterbox
 * to it; train and val take max(h, w), as Ultralytics does, saying so). */
static yolo_status check_imgsz(yolo_run_settings *r) {
    const yolo_config_value *v = &r->imgsz_given;
    if (v->kind != YOLO_VALUE_INT_LIST || v->n < 1 || v->n > 2)
        return yolo_error(YOLO_ERR_CONFIG, "imgsz: an integer or [h, w] (e.g. imgsz=640 or imgsz=[384,640])");
    r->imgsz_h = (int)v->list[0];
    r->imgsz_w = (int)v->list[v->n - 1];
    r->imgsz = r->imgsz_h > r->imgsz_w ? r->imgsz_h : r->imgsz_w;
    for (int i = 0; i < v->n; i++)
        if (v->list[i] % 32)
            return yolo_error(YOLO_ERR_CONFIG, "imgsz=%lld: must be a positive multiple of 32 (the model's largest "
                              "stride)", (long long)v->list[i]);
    return YOLO_OK;
}

static yolo_status check_run(yolo_run_settings *r) {
    const yolo_config_value *a = &r->amp_given; /* the key's choices admit only these */
    r->amp = a->kind == YOLO_VALUE_BOOL ? (a->b ? YOLO_AMP_AUTO : YOLO_AMP_OFF)
             : a->kind != YOLO_VALUE_STRING || strcmp(a->s, "fp32") == 0 ? YOLO_AMP_OFF
             : strcmp(a->s, "bf16") == 0                               ? YOLO_AMP_BF16
                                                                       : YOLO_AMP_FP16;
    yolo_status st = check_imgsz(r);
    return st ? st : check_batch(r);
}

static yolo_status check_loader(yolo_loader_settings *l, int imgsz) {
    l->augment.imgsz = imgsz;
    const yolo_config_value *c = &l->cache;
    const char *cache = c->kind == YOLO_VALUE_STRING ? c->s : (c->kind == YOLO_VALUE_BOOL && c->b ? "ram" : NULL);
    if (cache && strcmp(cache, "ram") != 0)
        return yolo_error(YOLO_ERR_CONFIG, "cache=%s: only cache=ram (or true) is built", cache);
    l->cache_ram = cache != NULL;
    const yolo_config_value *ms = &l->multi_scale_given;
    l->multi_scale = ms->kind == YOLO_VALUE_BOOL ? (ms->b ? 0.5 : 0.0)
                     : ms->kind == YOLO_VALUE_FLOAT ? ms->f : ms->kind == YOLO_VALUE_INT ? (double)ms->i : 0.0;
    const char *mode = l->copy_paste_mode ? l->copy_paste_mode : "flip";
    if (strcmp(mode, "flip") != 0 && strcmp(mode, "mixup") != 0)
        return yolo_error(YOLO_ERR_CONFIG, "copy_paste_mode=%s: must be flip or mixup", mode);
    l->augment.copy_paste_mode = strcmp(mode, "mixup") == 0 ? YOLO_COPY_PASTE_MIXUP : YOLO_COPY_PASTE_FLIP;
    return yolo_auto_augment_parse(l->auto_augment, &l->augment.auto_augment);
}

static void derive_checkpoint(const yolo_config *cfg, yolo_checkpoint_settings *c) {
    /* best.ckpt stores the EMA in fp16 unless half=False is given explicitly */
    c->half_best = c->half || yolo_config_layer_of(cfg, "half") == YOLO_CONFIG_LAYER_DEFAULT;
}

static void derive_val(yolo_val_settings *v) {
    v->split = YOLO_SPLIT_VAL;
    if (v->split_name && strcmp(v->split_name, "test") == 0) v->split = YOLO_SPLIT_TEST;
    if (v->split_name && strcmp(v->split_name, "train") == 0) v->split = YOLO_SPLIT_TRAIN;
}

/* Whether row's key holds another value than default.yaml's, compared as
 * args.yaml writes them (a checkpoint's args repeat the defaults, so
 * "given" alone would not do); *defaults is created on first use. */
static yolo_status differs(const yolo_config *cfg, const yolo_key_reader *row, yolo_config **defaults, char *now,
                           char *was, size_t size, bool *out) {
    *out = false;
    if (yolo_config_layer_of(cfg, row->key) <= YOLO_CONFIG_LAYER_DEFAULT) return YOLO_OK;
    yolo_status st = *defaults ? YOLO_OK : yolo_config_new(defaults);
    if (!st) st = yolo_config_format(cfg, row->key, now, size);
    if (!st) st = yolo_config_format(*defaults, row->key, was, size);
    *out = !st && strcmp(now, was) != 0;
    return st;
}

yolo_status yolo_settings_check_refused(const yolo_config *cfg, const yolo_key_reader *rows, int n) {
    yolo_config *defaults = NULL;
    yolo_status st = YOLO_OK;
    for (int k = 0; k < n && !st; k++) {
        char now[256], was[256];
        bool changed = false;
        if (rows[k].use == YOLO_KEY_REFUSED) st = differs(cfg, &rows[k], &defaults, now, was, sizeof now, &changed);
        if (changed)
            st = yolo_error(YOLO_ERR_CONFIG, "%s=%s (%s): not supported (%s); leave it at %s", rows[k].key, now,
                            yolo_config_source(cfg, rows[k].key), rows[k].reader, was);
    }
    yolo_config_free(defaults);
    return st;
}

/* Whether key holds another value than default.yaml's (its text in now);
 * a formatting failure is no (only its warning line is skipped). */
static bool given_other_value(const yolo_config *cfg, const char *key, yolo_config **defaults, char *now,
                              size_t size) {
    yolo_key_reader row = {.key = key};
    char was[256];
    bool changed = false;
    if (differs(cfg, &row, defaults, now, was, size < sizeof was ? size : sizeof was, &changed) != YOLO_OK) {
        yolo_error_clear();
        return false;
    }
    return changed;
}

void yolo_settings_warn_no_effect(const yolo_config *cfg, const char *const *keys, int n, const char *why, FILE *log) {
    yolo_config *defaults = NULL;
    char now[256];
    for (int i = 0; i < n; i++)
        if (given_other_value(cfg, keys[i], &defaults, now, sizeof now))
            fprintf(log, "WARNING: %s=%s (%s) has no effect: %s\n", keys[i], now, yolo_config_source(cfg, keys[i]), why);
    yolo_config_free(defaults);
}

void yolo_settings_warn_unread_task_keys(const yolo_config *cfg, const char *task, const char *const *keys_read,
                                         int n, FILE *log) {
    if (!keys_read) return;
    yolo_config *defaults = NULL;
    char now[256];
    for (int k = 0; k < yolo_settings_key_count; k++) {
        const yolo_key_reader *row = &yolo_settings_keys[k];
        bool read = row->use != YOLO_KEY_TASK_PLUGIN; /* only the task-plugin rows are checked */
        for (int i = 0; i < n && !read; i++) read = strcmp(keys_read[i], row->key) == 0;
        if (!read && given_other_value(cfg, row->key, &defaults, now, sizeof now))
            fprintf(log, "WARNING: %s=%s (%s) has no effect on task '%s' (its reader: %s)\n", row->key, now,
                    yolo_config_source(cfg, row->key), task, row->reader);
    }
    yolo_config_free(defaults);
}

yolo_status yolo_settings_read(const yolo_config *cfg, unsigned concerns, yolo_settings *out) {
    yolo_status st = yolo_settings_check_refused(cfg, yolo_settings_keys, yolo_settings_key_count);
    if (!st) st = yolo_settings_fill(cfg, concerns, out);
    if (st) return st;
    if ((concerns & YOLO_SETTINGS_RUN) && (st = check_run(&out->run))) return st;
    if ((concerns & YOLO_SETTINGS_LOADER) && (st = check_loader(&out->loader, out->run.imgsz))) return st;
    if (concerns & YOLO_SETTINGS_CHECKPOINT) derive_checkpoint(cfg, &out->checkpoint);
    if (concerns & YOLO_SETTINGS_VAL) derive_val(&out->val);
    return YOLO_OK;
}
