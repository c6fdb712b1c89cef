/* The merged configuration: keys, layered values, merging and reading. */
#include "cfg/config_internal.h"
#include "cfg/suggest.h"
#include "cfg/yaml_map.h"
#include "util/embedded.h"
#include "util/text_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_YAML "default.yaml"

typedef struct config_entry {
    yolo_config_key key; /* every string owned */
    yolo_config_value value;
    int layer;
    char *source; /* where the value came from */
    char *owner;  /* who defined the key */
} config_entry;

struct yolo_config {
    config_entry *entries;
    int n, cap;
};

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static config_entry *find_entry(const yolo_config *cfg, const char *name) {
    if (cfg == NULL || name == NULL) return NULL;
    for (int i = 0; i < cfg->n; i++)
        if (strcmp(cfg->entries[i].key.name, name) == 0) return &cfg->entries[i];
    return NULL;
}

static void entry_clear(config_entry *e) {
    free((void *)e->key.name);
    free((void *)e->key.choices);
    free((void *)e->key.default_value);
    free((void *)e->key.help);
    yolo_config_value_clear(&e->value);
    free(e->source);
    free(e->owner);
    memset(e, 0, sizeof *e);
}

void yolo_config_free(yolo_config *cfg) {
    if (cfg == NULL) return;
    for (int i = 0; i < cfg->n; i++) entry_clear(&cfg->entries[i]);
    free(cfg->entries);
    free(cfg);
}

/* Appends a key; takes ownership of *value. */
static yolo_status add_entry(yolo_config *cfg, const yolo_config_key *key, const char *default_text, const char *help,
                             yolo_config_value *value, int layer, const char *source, const char *owner) {
    if (cfg->n == cfg->cap) {
        int cap = cfg->cap ? cfg->cap * 2 : 128;
        config_entry *grown = realloc(cfg->entries, (size_t)cap * sizeof *grown);
        if (grown == NULL) goto nomem;
        cfg->entries = grown;
        cfg->cap = cap;
    }
    config_entry *e = &cfg->entries[cfg->n];
    memset(e, 0, sizeof *e);
    e->key = *key;
    e->key.name = strdup(key->name);
    e->key.choices = dup_or_null(key->choices);
    e->key.default_value = dup_or_null(default_text);
    e->key.help = strdup(help ? help : "");
    e->source = strdup(source);
    e->owner = strdup(owner);
    e->layer = layer;
    e->value = *value;
    memset(value, 0, sizeof *value);
    if (!e->key.name || (key->choices && !e->key.choices) || (default_text && !e->key.default_value) || !e->key.help ||
        !e->source || !e->owner) {
        entry_clear(e);
        goto nomem;
    }
    cfg->n++;
    return YOLO_OK;
nomem:
    yolo_config_value_clear(value);
    return yolo_error(YOLO_ERR_NOMEM, "out of memory adding configuration key '%s'", key->name);
}

static const yolo_config_key *core_key(const char *name) {
    for (int i = 0; i < yolo_core_key_count; i++)
        if (strcmp(yolo_core_keys[i].name, name) == 0) return &yolo_core_keys[i];
    return NULL;
}

yolo_status yolo_config_new(yolo_config **out) {
    *out = NULL;
    size_t size;
    const char *text = yolo_embedded_file(DEFAULT_YAML, &size);
    if (text == NULL) return yolo_error(YOLO_ERR_FORMAT, "%s is not embedded in libyolo (cmake/embed.cmake)", DEFAULT_YAML);
    yolo_yaml_item *items;
    int n_items;
    yolo_status st = yolo_yaml_map_parse(text, size, DEFAULT_YAML, &items, &n_items);
    if (st != YOLO_OK) return st;
    yolo_config *cfg = calloc(1, sizeof *cfg);
    if (cfg == NULL) {
        yolo_yaml_map_free(items, n_items);
        return yolo_error(YOLO_ERR_NOMEM, "out of memory creating a configuration");
    }
    for (int i = 0; i < n_items && st == YOLO_OK; i++) {
        if (core_key(items[i].key) == NULL)
            st = yolo_error(YOLO_ERR_CONFIG, "%s:%d: '%s' has no definition in core/cfg/keys.c", DEFAULT_YAML,
                            items[i].line, items[i].key);
    }
    for (int k = 0; k < yolo_core_key_count && st == YOLO_OK; k++) {
        const yolo_config_key *key = &yolo_core_keys[k];
        const yolo_yaml_item *item = NULL;
        for (int i = 0; i < n_items; i++)
            if (strcmp(items[i].key, key->name) == 0) item = &items[i];
        if (item == NULL) {
            st = yolo_error(YOLO_ERR_CONFIG, "%s: no default for key '%s' (defined in core/cfg/keys.c)", DEFAULT_YAML,
                            key->name);
            break;
        }
        char source[64], help[512];
        snprintf(source, sizeof source, "%s:%d", DEFAULT_YAML, item->line);
        yolo_yaml_line_comment(text, size, item->line, help, sizeof help);
        yolo_config_value value;
        if (item->is_mapping) {
            st = yolo_error(YOLO_ERR_CONFIG, "%s: '%s' must be %s, not a mapping", source, key->name,
                            yolo_config_type_phrase(key->type));
            break;
        }
        st = yolo_config_parse_value(key, item->value, item->quoted, source, &value);
        if (st == YOLO_OK)
            st = add_entry(cfg, key, item->value[0] ? item->value : NULL, help, &value, YOLO_CONFIG_LAYER_DEFAULT, source,
                           DEFAULT_YAML);
    }
    yolo_yaml_map_free(items, n_items);
    if (st != YOLO_OK) {
        yolo_config_free(cfg);
        return st;
    }
    *out = cfg;
    return YOLO_OK;
}

yolo_status yolo_config_copy(const yolo_config *cfg, yolo_config **out) {
    *out = NULL;
    yolo_config *copy = calloc(1, sizeof *copy);
    if (copy == NULL) return yolo_error(YOLO_ERR_NOMEM, "out of memory copying a configuration");
    for (int i = 0; i < cfg->n; i++) {
        const config_entry *e = &cfg->entries[i];
        yolo_config_value value;
        yolo_status st = yolo_config_value_copy(&value, &e->value);
        if (st == YOLO_OK) st = add_entry(copy, &e->key, e->key.default_value, e->key.help, &value, e->layer, e->source, e->owner);
        if (st != YOLO_OK) {
            yolo_config_free(copy);
            return st;
        }
    }
    *out = copy;
    return YOLO_OK;
}

yolo_status yolo_config_add_keys(yolo_config *cfg, const yolo_config_key *keys, int n, const char *owner) {
    if (owner == NULL) owner = "plugin";
    if (n > 0 && keys == NULL) return yolo_error(YOLO_ERR_CONFIG, "%s: %d configuration keys but no table", owner, n);
    for (int i = 0; i < n; i++) {
        const yolo_config_key *key = &keys[i];
        yolo_status st = yolo_config_check_definition(key, owner);
        if (st != YOLO_OK) return st;
        const config_entry *existing = find_entry(cfg, key->name);
        if (existing != NULL)
            return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' is already defined by %s", owner, key->name, existing->owner);
        char source[512];
        snprintf(source, sizeof source, "%s (default of '%s')", owner, key->name);
        yolo_config_value value;
        st = yolo_config_parse_value(key, key->default_value, false, source, &value);
        if (st != YOLO_OK) return st;
        st = add_entry(cfg, key, key->default_value, key->help, &value, YOLO_CONFIG_LAYER_TASK, owner, owner);
        if (st != YOLO_OK) return st;
    }
    return YOLO_OK;
}

static yolo_status unknown_key(const yolo_config *cfg, const char *key, const char *value, const char *source) {
    const char **names = malloc((size_t)(cfg->n ? cfg->n : 1) * sizeof *names);
    const char *near = NULL;
    if (names != NULL) {
        for (int i = 0; i < cfg->n; i++) names[i] = cfg->entries[i].key.name;
        near = yolo_suggest(key, names, cfg->n);
    }
    yolo_status st;
    if (near != NULL)
        st = yolo_error(YOLO_ERR_CONFIG, "%s: '%s' is not a valid key (in '%s=%s'); did you mean '%s'? ('yolo help' lists every key)",
                        source, key, key, value, near);
    else
        st = yolo_error(YOLO_ERR_CONFIG, "%s: '%s' is not a valid key (in '%s=%s'); 'yolo help' lists every key", source,
                        key, key, value);
    free(names);
    return st;
}

/* A parsed value waiting to be applied (merges are all or nothing). */
typedef struct pending_value {
    config_entry *entry;
    yolo_config_value value;
    char *source;
} pending_value;

/* Ultralytics' _handle_deprecation: old key names, renamed with a warning
 * (hide_* inverted into show_*), and save_hybrid, which it drops: here its
 * default (false, in every old args.yaml) is skipped and true, which asked
 * for labels not built here, is an error. */
static const struct {
    const char *old, *now; /* now NULL: dropped */
    bool invert;
} deprecated[] = {{"boxes", "show_boxes", false},
                  {"hide_labels", "show_labels", true},
                  {"hide_conf", "show_conf", true},
                  {"line_thickness", "line_width", false},
                  {"save_hybrid", NULL, false}};

/* Finds the key and parses the value; `check_resume`: the checkpoint layer
 * on resume. A dropped deprecated key leaves out->entry NULL. */
static yolo_status prepare(yolo_config *cfg, yolo_config_layer layer, const char *key, const char *text, bool quoted,
                           const char *source, bool check_resume, pending_value *out) {
    memset(out, 0, sizeof *out);
    config_entry *e = find_entry(cfg, key);
    bool invert = false;
    for (size_t i = 0; e == NULL && i < sizeof deprecated / sizeof *deprecated; i++) {
        if (strcmp(key, deprecated[i].old) != 0) continue;
        if (deprecated[i].now == NULL) {
            static const yolo_config_key flag = {.name = "save_hybrid", .type = YOLO_CONFIG_BOOL};
            yolo_config_value v;
            yolo_status st = yolo_config_parse_value(&flag, text, quoted, source, &v);
            if (st == YOLO_OK && v.b)
                st = yolo_error(YOLO_ERR_CONFIG, "%s: %s=%s: hybrid labels are not built (Ultralytics 8.3 removed the "
                                "key); leave it out", source, key, text);
            return st;
        }
        fprintf(stderr, "WARNING: %s: '%s' is deprecated in Ultralytics; taken as '%s'%s\n", source, key,
                deprecated[i].now, deprecated[i].invert ? " with the opposite value" : "");
        e = find_entry(cfg, deprecated[i].now);
        invert = deprecated[i].invert;
    }
    if (e == NULL) return unknown_key(cfg, key, text, source);
    yolo_config_value value;
    yolo_status st = yolo_config_parse_value(&e->key, text, quoted, source, &value);
    if (st != YOLO_OK) return st;
    if (invert && value.kind == YOLO_VALUE_BOOL) value.b = !value.b;
    if (check_resume && !(e->key.flags & YOLO_CONFIG_RESUMABLE) && e->layer > (int)layer &&
        !yolo_config_value_equal(&e->value, &value)) {
        char had[256], ckpt[256], may[1024] = "";
        yolo_config_value_format(&e->value, had, sizeof had);
        yolo_config_value_format(&value, ckpt, sizeof ckpt);
        for (int i = 0; i < cfg->n; i++) {
            if (!(cfg->entries[i].key.flags & YOLO_CONFIG_RESUMABLE)) continue;
            size_t len = strlen(may);
            snprintf(may + len, sizeof may - len, "%s%s", len ? ", " : "", cfg->entries[i].key.name);
        }
        yolo_config_value_clear(&value);
        return yolo_error(YOLO_ERR_CONFIG,
                          "%s: '%s=%s' cannot change on resume: the checkpoint has %s=%s (%s); keys that may change: %s",
                          e->source, key, had, key, ckpt, source, may);
    }
    out->source = strdup(source);
    if (out->source == NULL) {
        yolo_config_value_clear(&value);
        return yolo_error(YOLO_ERR_NOMEM, "out of memory setting '%s'", key);
    }
    out->entry = e;
    out->value = value;
    return YOLO_OK;
}

/* Applies a prepared value if its layer is not below the current one; frees what it does not keep. */
static void commit(pending_value *p, yolo_config_layer layer) {
    config_entry *e = p->entry;
    if (e != NULL && (int)layer >= e->layer) {
        yolo_config_value_clear(&e->value);
        free(e->source);
        e->value = p->value;
        e->source = p->source;
        e->layer = (int)layer;
    } else {
        yolo_config_value_clear(&p->value);
        free(p->source);
    }
    memset(p, 0, sizeof *p);
}

static void discard(pending_value *p) {
    yolo_config_value_clear(&p->value);
    free(p->source);
    memset(p, 0, sizeof *p);
}

yolo_status yolo_config_set(yolo_config *cfg, yolo_config_layer layer, const char *key, const char *value,
                            const char *source) {
    if (cfg == NULL || key == NULL) return yolo_error(YOLO_ERR_ARG, "yolo_config_set: NULL configuration or key");
    pending_value p;
    yolo_status st = prepare(cfg, layer, key, value ? value : "", false, source ? source : "command line", false, &p);
    if (st == YOLO_OK) commit(&p, layer);
    return st;
}

/* All or nothing: every item is checked before any is applied. */
static bool is_dataset_key(const char *key) {
    static const char *const keys[] = {"path", "train", "val", "test", "names", "nc", "download", "kpt_shape",
                                       "flip_idx", "channels"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0) return true;
    return false;
}

/* YOLO_CONFIG_ARGS_YAML: the keys of an Ultralytics args.yaml that no key
 * here matches: save_dir (that run's record) skipped whatever it holds, the
 * loss gains of tasks not built here skipped at their default. */
static const struct {
    const char *key, *ultralytics_default, *task;
} args_yaml_only[] = {{"save_dir", NULL, NULL}, {"pose", "12.0", "pose"}, {"kobj", "1.0", "pose"},
                      {"rle", "1.0", "pose (8.4)"}, {"angle", "1.0", "obb (8.4)"}};

/* Whether an args.yaml item that is no key here is skipped; an error when
 * it holds a value that would matter. */
static yolo_status args_yaml_skip(const yolo_yaml_item *item, const char *where, bool *skip) {
    *skip = false;
    for (size_t i = 0; i < sizeof args_yaml_only / sizeof *args_yaml_only; i++) {
        if (strcmp(item->key, args_yaml_only[i].key) != 0) continue;
        const char *def = args_yaml_only[i].ultralytics_default;
        char *end = NULL;
        double v = item->value ? strtod(item->value, &end) : 0;
        if (def && (!item->value || end == item->value || *end || v != strtod(def, NULL)))
            return yolo_error(YOLO_ERR_CONFIG, "%s: %s=%s is a loss gain of Ultralytics' %s task, which is not "
                              "loaded here (tasks: 'yolo checks'); remove it or leave it at %s", where, item->key,
                              item->value ? item->value : "null", args_yaml_only[i].task, def);
        *skip = true;
    }
    return YOLO_OK;
}

yolo_status yolo_config_merge_yaml(yolo_config *cfg, yolo_config_layer layer, const char *text, size_t size,
                                   const char *source, unsigned flags) {
    if (source == NULL) source = "yaml";
    yolo_yaml_item *items;
    int n;
    yolo_status st = yolo_yaml_map_parse(text, size, source, &items, &n);
    if (st != YOLO_OK) return st;
    pending_value *pending = calloc((size_t)(n ? n : 1), sizeof *pending);
    if (pending == NULL) {
        yolo_yaml_map_free(items, n);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", source);
    }
    int n_pending = 0;
    for (int i = 0; i < n && st == YOLO_OK; i++) {
        const yolo_yaml_item *item = &items[i];
        const config_entry *e = find_entry(cfg, item->key);
        if (e == NULL && (flags & YOLO_CONFIG_KNOWN_ONLY)) continue;
        if ((flags & YOLO_CONFIG_DATA_YAML) && is_dataset_key(item->key)) continue;
        char where[1100];
        snprintf(where, sizeof where, "%s:%d", source, item->line);
        bool skip = false;
        if (e == NULL && (flags & YOLO_CONFIG_ARGS_YAML) && ((st = args_yaml_skip(item, where, &skip)) || skip)) continue;
        if (e != NULL && (item->is_mapping || (item->is_list && e->key.type != YOLO_CONFIG_INT_LIST))) {
            st = yolo_error(YOLO_ERR_CONFIG, "%s: '%s' is a %s; '%s' must be %s", where, item->key,
                            item->is_mapping ? "mapping" : "list", item->key, yolo_config_type_phrase(e->key.type));
            break;
        }
        st = prepare(cfg, layer, item->key, item->value, item->quoted, where, (flags & YOLO_CONFIG_RESUME) != 0,
                     &pending[n_pending]);
        if (st == YOLO_OK) n_pending++;
    }
    for (int i = 0; i < n_pending; i++) {
        if (st == YOLO_OK) commit(&pending[i], layer);
        else discard(&pending[i]);
    }
    free(pending);
    yolo_yaml_map_free(items, n);
    return st;
}

yolo_status yolo_config_merge_yaml_file(yolo_config *cfg, yolo_config_layer layer, const char *path, unsigned flags) {
    char *text = NULL;
    size_t size = 0;
    const char *role = layer == YOLO_CONFIG_LAYER_CFG     ? "the cfg file"
                       : layer == YOLO_CONFIG_LAYER_MODEL ? "the model yaml"
                       : layer == YOLO_CONFIG_LAYER_DATA  ? "the data yaml"
                                                          : "the yaml";
    yolo_status st = yolo_read_text_file(path, role, &text, &size);
    if (st == YOLO_OK) st = yolo_config_merge_yaml(cfg, layer, text, size, path, flags);
    free(text);
    return st;
}

/* ---- reading ---- */

static yolo_status lookup(const yolo_config *cfg, const char *key, const config_entry **out) {
    *out = find_entry(cfg, key);
    if (*out == NULL) return yolo_error(YOLO_ERR_CONFIG, "configuration has no key '%s'", key ? key : "(null)");
    return YOLO_OK;
}

static yolo_status wrong_kind(const config_entry *e, const char *wanted) {
    char text[256];
    yolo_config_value_format(&e->value, text, sizeof text);
    return yolo_error(YOLO_ERR_CONFIG, "'%s=%s' (%s) is not %s", e->key.name, text, e->source, wanted);
}

yolo_status yolo_config_get(const yolo_config *cfg, const char *key, yolo_config_value *out) {
    const config_entry *e;
    yolo_status st = lookup(cfg, key, &e);
    if (st == YOLO_OK) *out = e->value;
    return st;
}

yolo_status yolo_config_get_bool(const yolo_config *cfg, const char *key, bool *out) {
    const config_entry *e;
    yolo_status st = lookup(cfg, key, &e);
    if (st != YOLO_OK) return st;
    if (e->value.kind != YOLO_VALUE_BOOL) return wrong_kind(e, "a bool");
    *out = e->value.b;
    return YOLO_OK;
}

yolo_status yolo_config_get_int(const yolo_config *cfg, const char *key, int64_t *out) {
    const config_entry *e;
    yolo_status st = lookup(cfg, key, &e);
    if (st != YOLO_OK) return st;
    /* an integer list key given one bare integer (imgsz=640) reads as that integer */
    if (e->value.kind == YOLO_VALUE_INT_LIST && e->value.n == 1 && e->value.b) {
        *out = e->value.list[0];
        return YOLO_OK;
    }
    if (e->value.kind != YOLO_VALUE_INT) return wrong_kind(e, "an integer");
    *out = e->value.i;
    return YOLO_OK;
}

yolo_status yolo_config_get_float(const yolo_config *cfg, const char *key, double *out) {
    const config_entry *e;
    yolo_status st = lookup(cfg, key, &e);
    if (st != YOLO_OK) return st;
    if (e->value.kind == YOLO_VALUE_INT) *out = (double)e->value.i;
    else if (e->value.kind == YOLO_VALUE_FLOAT) *out = e->value.f;
    else return wrong_kind(e, "a number");
    return YOLO_OK;
}

yolo_status yolo_config_get_string(const yolo_config *cfg, const char *key, const char **out) {
    const config_entry *e;
    yolo_status st = lookup(cfg, key, &e);
    if (st != YOLO_OK) return st;
    if (e->value.kind == YOLO_VALUE_NULL && (e->key.flags & YOLO_CONFIG_NULLABLE)) *out = NULL;
    else if (e->value.kind == YOLO_VALUE_STRING) *out = e->value.s;
    else return wrong_kind(e, "a text");
    return YOLO_OK;
}

yolo_status yolo_config_get_int_list(const yolo_config *cfg, const char *key, const int64_t **items, int *n) {
    const config_entry *e;
    yolo_status st = lookup(cfg, key, &e);
    if (st != YOLO_OK) return st;
    if (e->value.kind != YOLO_VALUE_INT_LIST) return wrong_kind(e, "a list of integers");
    *items = e->value.list;
    *n = e->value.n;
    return YOLO_OK;
}

bool yolo_config_is_null(const yolo_config *cfg, const char *key) {
    const config_entry *e = find_entry(cfg, key);
    return e != NULL && e->value.kind == YOLO_VALUE_NULL;
}

const char *yolo_config_source(const yolo_config *cfg, const char *key) {
    const config_entry *e = find_entry(cfg, key);
    return e ? e->source : NULL;
}

int yolo_config_layer_of(const yolo_config *cfg, const char *key) {
    const config_entry *e = find_entry(cfg, key);
    return e ? e->layer : -1;
}

yolo_status yolo_config_format(const yolo_config *cfg, const char *key, char *buf, size_t size) {
    const config_entry *e;
    yolo_status st = lookup(cfg, key, &e);
    if (st != YOLO_OK) return st;
    int needed = yolo_config_value_format(&e->value, buf, size);
    if (needed < 0 || (size_t)needed >= size)
        return yolo_error(YOLO_ERR_ARG, "the value of '%s' needs %d bytes, the buffer has %zu", key, needed + 1, size);
    return YOLO_OK;
}

int yolo_config_key_count(const yolo_config *cfg) { return cfg ? cfg->n : 0; }

const yolo_config_key *yolo_config_key_at(const yolo_config *cfg, int index) {
    if (cfg == NULL || index < 0 || index >= cfg->n) return NULL;
    return &cfg->entries[index].key;
}

const yolo_config_key *yolo_config_find_key(const yolo_config *cfg, const char *name) {
    const config_entry *e = find_entry(cfg, name);
    return e ? &e->key : NULL;
}
