/* The settings key table (core/settings/settings.h):
 *   1. every key of the embedded default.yaml has a row: a settings field
 *      that reads it, or an explicit status (read elsewhere in the core,
 *      by task plugins, refused); no row names a key
 *      default.yaml lacks;
 *   2. every field row really is its field's reader: a value set on the
 *      command line arrives in that field (and the kind fits the key's type),
 *      and no two rows write the same field;
 *   3. yolo_settings_read checks and derives (imgsz, cache, split, half);
 *   4. a REFUSED key of the table refuses its non-default value. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "settings/settings.h"
#include "util/embedded.h"

/* The keys of default.yaml: the names at the start of its lines. */
static int default_yaml_keys(char names[][64], int cap) {
    size_t size = 0;
    const char *text = yolo_embedded_file("default.yaml", &size);
    CHECK_MSG(text != NULL, "default.yaml is not embedded");
    int n = 0;
    for (const char *line = text; text && line < text + size && *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = text + size;
        size_t len = 0;
        while (line + len < end && (line[len] == '_' || (line[len] >= 'a' && line[len] <= 'z') ||
                                    (line[len] >= '0' && line[len] <= '9')))
            len++;
        if (len > 0 && len < 64 && line[len] == ':' && n < cap) {
            memcpy(names[n], line, len);
            names[n++][len] = '\0';
        }
        line = *end ? end + 1 : end;
    }
    return n;
}

static const char *use_name(yolo_key_use use) {
    switch (use) {
    case YOLO_KEY_SETTING: return "settings field";
    case YOLO_KEY_CORE: return "core, outside the settings";
    case YOLO_KEY_TASK_PLUGIN: return "task plugins (ctx cfg)";
    case YOLO_KEY_REFUSED: return "refused";
    }
    return "?";
}

static void test_coverage(void) {
    static char keys[256][64];
    int n = default_yaml_keys(keys, 256);
    CHECK_MSG(n > 80, "default.yaml: only %d keys found", n);
    int counts[5] = {0};
    for (int i = 0; i < n; i++) {
        int at = 0, rows = 0;
        const yolo_key_reader *row;
        while ((row = yolo_settings_find_key(keys[i], &at)) != NULL) {
            rows++;
            counts[row->use]++;
            CHECK_MSG(row->reader && row->reader[0], "key %s: the row names no reader or reason", keys[i]);
        }
        CHECK_MSG(rows > 0, "default.yaml key '%s' has no row in core/settings/settings_table.c", keys[i]);
    }
    for (int k = 0; k < yolo_settings_key_count; k++) {
        bool known = false;
        for (int i = 0; i < n && !known; i++) known = strcmp(keys[i], yolo_settings_keys[k].key) == 0;
        CHECK_MSG(known, "settings_table.c row '%s' is not a key of default.yaml", yolo_settings_keys[k].key);
    }
    printf("%d keys, %d rows:", n, yolo_settings_key_count);
    for (int u = 0; u < 5; u++) printf(" %d %s%s", counts[u], use_name((yolo_key_use)u), u < 4 ? ";" : "\n");
}

/* A value for `key` other than its default, within its range and choices, as command-line text. */
static void probe_text(const yolo_config_key *key, const yolo_config_value *now, char *out, size_t size) {
    double lo = (key->flags & YOLO_CONFIG_MIN) ? key->min : -1e9, hi = (key->flags & YOLO_CONFIG_MAX) ? key->max : 1e9;
    switch (key->type) {
    case YOLO_CONFIG_BOOL: snprintf(out, size, "%s", now->b ? "false" : "true"); break;
    case YOLO_CONFIG_INT: snprintf(out, size, "%lld", (long long)(now->i + 1 <= hi ? now->i + 1 : now->i - 1)); break;
    case YOLO_CONFIG_FLOAT: {
        double v = now->kind == YOLO_VALUE_FLOAT ? now->f : 0.0;
        double probe = hi < 1e9 ? (v + hi) / 2 : v + 0.5;
        if (probe == v) probe = (v + lo) / 2;
        snprintf(out, size, "%.17g", probe);
        break;
    }
    case YOLO_CONFIG_STRING:
    case YOLO_CONFIG_BOOL_OR_STRING:
        if (key->choices) { /* the first choice that is not the current value */
            const char *bar = strchr(key->choices, '|');
            size_t len = bar ? (size_t)(bar - key->choices) : strlen(key->choices);
            if (now->s && strncasecmp(now->s, key->choices, len) == 0 && bar) {
                const char *next = bar + 1, *bar2 = strchr(next, '|');
                len = bar2 ? (size_t)(bar2 - next) : strlen(next);
                snprintf(out, size, "%.*s", (int)len, next);
            } else {
                snprintf(out, size, "%.*s", (int)len, key->choices);
            }
        } else {
            /* device has a grammar (cfg/keys.c's rules): a valid value */
            snprintf(out, size, "%s", strcmp(key->name, "device") == 0       ? "vulkan:1"
                                      : key->type == YOLO_CONFIG_STRING ? "probe_value"
                                                                        : "probe.ckpt");
        }
        break;
    case YOLO_CONFIG_INT_LIST: snprintf(out, size, "%lld", lo > 3 ? (long long)lo : 3LL); break;
    case YOLO_CONFIG_NUMBER: snprintf(out, size, "%lld", (long long)(now->i + 1 <= hi ? now->i + 1 : now->i - 1)); break;
    case YOLO_CONFIG_BOOL_OR_NUMBER: snprintf(out, size, "%s", now->kind == YOLO_VALUE_FLOAT ? "true" : "0.25"); break;
    default: snprintf(out, size, "unexpected"); break;
    }
}

static bool kind_fits(yolo_setting_kind kind, yolo_config_type type) {
    switch (kind) {
    case YOLO_SETTING_INT:
    case YOLO_SETTING_INT64: return type == YOLO_CONFIG_INT;
    case YOLO_SETTING_DOUBLE:
    case YOLO_SETTING_FLOAT: return type == YOLO_CONFIG_FLOAT;
    case YOLO_SETTING_BOOL: return type == YOLO_CONFIG_BOOL;
    case YOLO_SETTING_STRING: return type == YOLO_CONFIG_STRING;
    case YOLO_SETTING_VALUE:
        return type == YOLO_CONFIG_BOOL_OR_STRING || type == YOLO_CONFIG_INT_LIST || type == YOLO_CONFIG_NUMBER ||
               type == YOLO_CONFIG_BOOL_OR_NUMBER;
    }
    return false;
}

/* The field holds what the config now holds for the key. */
static bool field_matches(const yolo_key_reader *row, const char *field, const yolo_config_value *v) {
    switch (row->kind) {
    case YOLO_SETTING_INT: return *(const int *)field == (int)v->i;
    case YOLO_SETTING_INT64: return *(const int64_t *)field == v->i;
    case YOLO_SETTING_DOUBLE: return *(const double *)field == v->f;
    case YOLO_SETTING_FLOAT: return *(const float *)field == (float)v->f;
    case YOLO_SETTING_BOOL: return *(const bool *)field == v->b;
    case YOLO_SETTING_STRING: return *(const char *const *)field && strcmp(*(const char *const *)field, v->s) == 0;
    case YOLO_SETTING_VALUE: {
        const yolo_config_value *f = (const yolo_config_value *)field;
        if (v->kind == YOLO_VALUE_INT_LIST)
            return f->kind == v->kind && f->n == v->n && f->b == v->b && (f->n == 0 || f->list[0] == v->list[0]);
        if (v->kind == YOLO_VALUE_INT) return f->kind == YOLO_VALUE_INT && f->i == v->i;
        if (v->kind == YOLO_VALUE_FLOAT) return f->kind == YOLO_VALUE_FLOAT && f->f == v->f;
        if (v->kind == YOLO_VALUE_BOOL) return f->kind == YOLO_VALUE_BOOL && f->b == v->b;
        return f->kind == YOLO_VALUE_STRING && v->kind == YOLO_VALUE_STRING && strcmp(f->s, v->s) == 0;
    }
    }
    return false;
}

static const char *concern_struct(const yolo_key_reader *row, const yolo_settings *s, const yolo_launch_settings *l) {
    switch (row->concern) {
    case YOLO_SETTINGS_LAUNCH: return (const char *)l;
    case YOLO_SETTINGS_RUN: return (const char *)&s->run;
    case YOLO_SETTINGS_OPTIM: return (const char *)&s->optim;
    case YOLO_SETTINGS_LOADER: return (const char *)&s->loader;
    case YOLO_SETTINGS_CHECKPOINT: return (const char *)&s->checkpoint;
    case YOLO_SETTINGS_VAL: return (const char *)&s->val;
    case YOLO_SETTINGS_PREDICT: return (const char *)&s->predict;
    case YOLO_SETTINGS_DIST: return (const char *)&s->dist;
    case YOLO_SETTINGS_PICTURES: return (const char *)&s->pictures;
    }
    return NULL;
}

static void test_fields_read(void) {
    int fields = 0;
    for (int k = 0; k < yolo_settings_key_count; k++) {
        const yolo_key_reader *row = &yolo_settings_keys[k];
        if (row->use != YOLO_KEY_SETTING) continue;
        fields++;
        /* the field is named after its key (a swapped row shows here), but for these */
        static const char *const renamed[][2] = {{"split", "split_name"}, {"dist_bucket_mb", "bucket_mb"},
                                                                {"batch", "batch_given"}, {"imgsz", "imgsz_given"},
                                                                {"multi_scale", "multi_scale_given"}, {"amp", "amp_given"}};
        const char *field_name = row->key;
        for (size_t r = 0; r < sizeof renamed / sizeof *renamed; r++)
            if (strcmp(row->key, renamed[r][0]) == 0) field_name = renamed[r][1];
        const char *dot = strrchr(row->reader, '.');
        CHECK_MSG(dot && strcmp(dot + 1, field_name) == 0, "row '%s' reads into %s", row->key, row->reader);
        for (int j = 0; j < k; j++)
            CHECK_MSG(!(yolo_settings_keys[j].use == YOLO_KEY_SETTING && yolo_settings_keys[j].concern == row->concern &&
                        yolo_settings_keys[j].offset == row->offset),
                      "rows '%s' and '%s' write the same field %s", yolo_settings_keys[j].key, row->key, row->reader);
        yolo_config *cfg = NULL;
        if (yolo_config_new(&cfg) != YOLO_OK) {
            CHECK_MSG(0, "yolo_config_new: %s", yolo_last_error());
            return;
        }
        const yolo_config_key *key = yolo_config_find_key(cfg, row->key);
        CHECK_MSG(key && kind_fits(row->kind, key->type), "row '%s' (%s): its kind does not fit the key's type",
                  row->key, row->reader);
        yolo_config_value now = {0};
        char text[128];
        CHECK(yolo_config_get(cfg, row->key, &now) == YOLO_OK);
        if (key) probe_text(key, &now, text, sizeof text);
        yolo_status st = key ? yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, row->key, text, "test") : YOLO_ERR_CONFIG;
        CHECK_MSG(st == YOLO_OK, "%s=%s: %s", row->key, text, yolo_last_error());
        CHECK(yolo_config_get(cfg, row->key, &now) == YOLO_OK);
        yolo_settings set;
        yolo_launch_settings launch;
        st = row->concern == YOLO_SETTINGS_LAUNCH ? yolo_settings_fill_launch(cfg, &launch)
                                                  : yolo_settings_fill(cfg, row->concern, &set);
        CHECK_MSG(st == YOLO_OK, "filling %s: %s", row->reader, yolo_last_error());
        if (!st)
            CHECK_MSG(field_matches(row, concern_struct(row, &set, &launch) + row->offset, &now),
                      "%s=%s did not arrive in %s", row->key, text, row->reader);
        yolo_config_free(cfg);
    }
    CHECK_MSG(fields > 40, "only %d settings fields", fields);
}

static yolo_status read_with(const char *key, const char *value, yolo_settings *set) {
    yolo_config *cfg = NULL;
    yolo_status st = yolo_config_new(&cfg);
    if (!st && key) st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, key, value, "command line");
    if (!st) st = yolo_settings_read(cfg, YOLO_SETTINGS_TRAIN | YOLO_SETTINGS_PREDICT, set);
    yolo_config_free(cfg); /* the numbers and flags checked below are copies */
    return st;
}

static void test_checks(void) {
    yolo_settings set;
    CHECK_MSG(read_with(NULL, NULL, &set) == YOLO_OK, "defaults: %s", yolo_last_error());
    CHECK(set.run.imgsz == 640 && set.run.batch == 16 && set.optim.epochs == 100 && set.optim.lr0 == 0.01);
    CHECK(set.loader.augment.imgsz == 640 && set.loader.augment.mosaic == 1.0f && set.loader.augment.close_mosaic == 10);
    CHECK(!set.loader.cache_ram && set.val.split == YOLO_SPLIT_VAL && set.val.val);
    CHECK_MSG(set.checkpoint.half_best, "half left at its default: best.ckpt in fp16");
    CHECK(read_with("half", "false", &set) == YOLO_OK && !set.checkpoint.half_best);
    CHECK(read_with("half", "true", &set) == YOLO_OK && set.checkpoint.half_best);
    CHECK(read_with("cache", "ram", &set) == YOLO_OK && set.loader.cache_ram);
    CHECK(read_with("cache", "true", &set) == YOLO_OK && set.loader.cache_ram);
    CHECK(read_with("split", "test", &set) == YOLO_OK && set.val.split == YOLO_SPLIT_TEST);
    /* cls_pw (Ultralytics 8.4): the class weights' power, in [0, 1] as Ultralytics asserts */
    CHECK(read_with(NULL, NULL, &set) == YOLO_OK && set.optim.cls_pw == 0.0);
    CHECK(read_with("cls_pw", "0.5", &set) == YOLO_OK && set.optim.cls_pw == 0.5);
    CHECK_MSG(read_with("cls_pw", "1.5", &set) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "cls_pw"), "%s",
              yolo_last_error());
    CHECK(read_with("imgsz", "320", &set) == YOLO_OK && set.loader.augment.imgsz == 320);
    CHECK(read_with("imgsz", "100", &set) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "imgsz=100"));
    CHECK(read_with("cache", "disk", &set) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "cache=disk"));
    /* freeze=3 is the first three layers, freeze=[3] layer 3 alone (as Ultralytics' int and list) */
    CHECK(read_with("freeze", "3", &set) == YOLO_OK && set.optim.freeze.kind == YOLO_VALUE_INT_LIST &&
          set.optim.freeze.b && set.optim.freeze.n == 1);
    CHECK(read_with("freeze", "[3]", &set) == YOLO_OK && !set.optim.freeze.b && set.optim.freeze.n == 1);
    CHECK(read_with(NULL, NULL, &set) == YOLO_OK && set.optim.time == 0 && set.loader.fraction == 1.0 &&
          !set.predict.save_txt && !set.run.profile);
    /* copy_paste and auto_augment (issue 14): Ultralytics' defaults, each value into the augmentation */
    CHECK(read_with(NULL, NULL, &set) == YOLO_OK && set.loader.augment.copy_paste == 0 &&
          set.loader.augment.copy_paste_mode == YOLO_COPY_PASTE_FLIP &&
          set.loader.augment.auto_augment == YOLO_AUTO_AUGMENT_RANDAUGMENT);
    CHECK(read_with("copy_paste", "0.5", &set) == YOLO_OK && set.loader.augment.copy_paste == 0.5f);
    CHECK(read_with("copy_paste_mode", "mixup", &set) == YOLO_OK &&
          set.loader.augment.copy_paste_mode == YOLO_COPY_PASTE_MIXUP);
    CHECK(read_with("auto_augment", "autoaugment", &set) == YOLO_OK &&
          set.loader.augment.auto_augment == YOLO_AUTO_AUGMENT_AUTOAUGMENT);
    CHECK(read_with("auto_augment", "augmix", &set) == YOLO_OK && set.loader.augment.auto_augment == YOLO_AUTO_AUGMENT_AUGMIX);
    CHECK(read_with("auto_augment", "null", &set) == YOLO_OK && set.loader.augment.auto_augment == YOLO_AUTO_AUGMENT_NONE);
    /* multi_scale: Ultralytics 8.3's bool (true is a range of 0.5) or 8.4's fraction */
    CHECK(read_with(NULL, NULL, &set) == YOLO_OK && set.loader.multi_scale == 0);
    CHECK(read_with("multi_scale", "true", &set) == YOLO_OK && set.loader.multi_scale == 0.5);
    CHECK(read_with("multi_scale", "0.25", &set) == YOLO_OK && set.loader.multi_scale == 0.25);
    CHECK(read_with("multi_scale", "0.0", &set) == YOLO_OK && set.loader.multi_scale == 0);
    CHECK(read_with("multi_scale", "1.5", &set) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "multi_scale=1.5") &&
          strstr(yolo_last_error(), "[0, 1]"));
    CHECK_MSG(read_with("multi_scale", "wide", &set) == YOLO_ERR_CONFIG &&
                  strstr(yolo_last_error(), "true, false or a number"),
              "%s", yolo_last_error());
    /* amp: Ultralytics 8.4's True, False, fp16, bf16 or fp32 (any case) */
    CHECK(read_with(NULL, NULL, &set) == YOLO_OK && set.run.amp == YOLO_AMP_AUTO);
    CHECK(read_with("amp", "false", &set) == YOLO_OK && set.run.amp == YOLO_AMP_OFF);
    CHECK(read_with("amp", "fp32", &set) == YOLO_OK && set.run.amp == YOLO_AMP_OFF);
    CHECK(read_with("amp", "BF16", &set) == YOLO_OK && set.run.amp == YOLO_AMP_BF16);
    CHECK(read_with("amp", "fp16", &set) == YOLO_OK && set.run.amp == YOLO_AMP_FP16);
    CHECK(read_with("amp", "int8", &set) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "amp=int8") &&
          strstr(yolo_last_error(), "bf16"));
    /* MuSGD (Ultralytics 8.4) is built: read as any choice (the trainer picks it by name, any case) */
    CHECK_MSG(read_with("optimizer", "musgd", &set) == YOLO_OK, "%s", yolo_last_error());
    /* bad values: named, with what is allowed */
    CHECK(read_with("copy_paste", "1.5", &set) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "copy_paste"));
    CHECK(read_with("copy_paste_mode", "paste", &set) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "paste") &&
          strstr(yolo_last_error(), "mixup"));
    CHECK_MSG(read_with("auto_augment", "trivialaugment", &set) == YOLO_ERR_CONFIG &&
                  strstr(yolo_last_error(), "trivialaugment") && strstr(yolo_last_error(), "randaugment") &&
                  strstr(yolo_last_error(), "augmix"),
              "%s", yolo_last_error());
}

/* A REFUSED row: the default passes (also when repeated by a checkpoint's args), another value fails. */
static void test_refused(void) {
    const yolo_key_reader rows[] = {{"fraction", YOLO_KEY_REFUSED, 0, 0, 0, "a subset of the train images is not built"}};
    yolo_config *cfg = NULL;
    CHECK(yolo_config_new(&cfg) == YOLO_OK);
    CHECK(yolo_settings_check_refused(cfg, rows, 1) == YOLO_OK);
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CHECKPOINT, "fraction", "1.0", "last.ckpt") == YOLO_OK);
    CHECK_MSG(yolo_settings_check_refused(cfg, rows, 1) == YOLO_OK, "the default repeated: %s", yolo_last_error());
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "fraction", "0.5", "command line") == YOLO_OK);
    CHECK(yolo_settings_check_refused(cfg, rows, 1) == YOLO_ERR_CONFIG);
    const char *msg = yolo_last_error();
    CHECK_MSG(strstr(msg, "fraction=0.5") && strstr(msg, "command line") && strstr(msg, "not built"), "%s", msg);
    yolo_config_free(cfg);
}

/* The keys refused by the table: each refuses a non-default value with its reason. */
static void test_table_refusals(void) {
    /* Ultralytics 8.3's keys for what is not built: their defaults pass (an
     * Ultralytics args.yaml repeats them), any other value is refused */
    static const char *const cases[][3] = {
        {"deterministic", "false", "true"}, {"dnn", "true", "false"},        {"vid_stride", "2", "1"},
        {"stream_buffer", "true", "false"}, {"visualize", "true", "false"},  {"augment", "true", "false"},
        {"embed", "[21]", "null"},           {"show", "true", "false"},      {"save_frames", "true", "false"},
        {"tracker", "bytetrack.yaml", "botsort.yaml"},
        /* Ultralytics 8.4's */
        {"compile", "true", "false"},        {"compile", "max-autotune", "false"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        yolo_settings set;
        CHECK_MSG(read_with(cases[i][0], cases[i][2], &set) == YOLO_OK, "%s=%s (the default): %s", cases[i][0],
                  cases[i][2], yolo_last_error());
        CHECK_MSG(read_with(cases[i][0], cases[i][1], &set) == YOLO_ERR_CONFIG, "%s=%s was accepted", cases[i][0],
                  cases[i][1]);
        CHECK_MSG(strstr(yolo_last_error(), cases[i][0]) && strstr(yolo_last_error(), "not supported"), "%s",
                  yolo_last_error());
    }
}

/* end2end (Ultralytics 8.4): null, true and false all read (YOLO26's head
 * or its NMS one; modes/load_model.c applies it). */
static void test_end2end(void) {
    yolo_settings set;
    CHECK_MSG(read_with(NULL, NULL, &set) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(read_with("end2end", "false", &set) == YOLO_OK, "end2end=false: %s", yolo_last_error());
    CHECK_MSG(read_with("end2end", "null", &set) == YOLO_OK, "end2end=null: %s", yolo_last_error());
    CHECK_MSG(read_with("end2end", "true", &set) == YOLO_OK, "end2end=true: %s", yolo_last_error());
}

int main(void) {
    test_refused();
    test_end2end();
    test_table_refusals();
    test_coverage();
    test_fields_read();
    test_checks();
    return test_result("test_settings");
}
