/* Parsing, checking, copying and formatting configuration values. */
#include "cfg/config_internal.h"
#include "cfg/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define MAX_CHOICES 32
#define MAX_LIST 256

const char *yolo_config_type_phrase(yolo_config_type type) {
    switch (type) {
    case YOLO_CONFIG_BOOL: return "a bool (true or false)";
    case YOLO_CONFIG_INT: return "an integer";
    case YOLO_CONFIG_FLOAT: return "a number";
    case YOLO_CONFIG_STRING: return "a text";
    case YOLO_CONFIG_BOOL_OR_STRING: return "true, false or a text";
    case YOLO_CONFIG_INT_LIST: return "an integer or a list of integers";
    case YOLO_CONFIG_NUMBER: return "an integer or a number";
    case YOLO_CONFIG_BOOL_OR_NUMBER: return "true, false or a number";
    }
    return "a value";
}

static const char *type_example(yolo_config_type type) {
    switch (type) {
    case YOLO_CONFIG_BOOL: return "true";
    case YOLO_CONFIG_INT: return "8";
    case YOLO_CONFIG_FLOAT: return "0.5";
    case YOLO_CONFIG_STRING: return "text";
    case YOLO_CONFIG_BOOL_OR_STRING: return "true";
    case YOLO_CONFIG_INT_LIST: return "[0,2]";
    case YOLO_CONFIG_NUMBER: return "16";
    case YOLO_CONFIG_BOOL_OR_NUMBER: return "0.5";
    }
    return "value";
}

static bool is_null_text(const char *t) {
    return t[0] == '\0' || strcmp(t, "~") == 0 || strcasecmp(t, "null") == 0 || strcasecmp(t, "none") == 0;
}

static bool parse_int(const char *t, int64_t *out, bool *overflow) {
    char *end;
    *overflow = false;
    if (t[0] == '\0' || isspace((unsigned char)t[0])) return false;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (*end != '\0') return false;
    /* every integer key is held in a C int: what does not fit is out of
     * range, never wrapped into another valid number */
    if (errno == ERANGE || v < INT32_MIN || v > INT32_MAX) *overflow = true;
    *out = (int64_t)v;
    return true;
}

static yolo_status overflow_error(const yolo_config_key *key, const char *text, const char *source) {
    return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s' is out of range; integers must be within [%d, %d]", source,
                      key->name, text, INT32_MIN, INT32_MAX);
}

static bool parse_float(const char *t, double *out) {
    char *end;
    if (t[0] == '\0' || isspace((unsigned char)t[0])) return false;
    /* Numbers only: no hex, inf or nan spelt out. */
    for (const char *p = t; *p; p++)
        if (!(isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-')) return false;
    double v = strtod(t, &end);
    if (*end != '\0') return false;
    *out = v;
    return true;
}

/* What kind a plain scalar looks like, for "is of invalid type X". */
static const char *kind_of_text(const char *t, bool quoted) {
    int64_t i;
    double f;
    bool overflow;
    if (quoted) return "text";
    if (is_null_text(t)) return "null";
    if (strcasecmp(t, "true") == 0 || strcasecmp(t, "false") == 0) return "bool";
    if (parse_int(t, &i, &overflow)) return "int";
    if (parse_float(t, &f)) return "float";
    if (t[0] == '[') return "list";
    return "text";
}

/* An example value: the key's default where it has one. */
static const char *example(const yolo_config_key *key) {
    const char *d = key->default_value;
    if (d != NULL && d[0] != '\0' && key->type != YOLO_CONFIG_STRING && key->type != YOLO_CONFIG_BOOL_OR_STRING) return d;
    return type_example(key->type);
}

static yolo_status type_error(const yolo_config_key *key, const char *text, bool quoted, const char *source) {
    return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s' is of invalid type %s; '%s' must be %s (e.g. %s=%s)", source,
                      key->name, text, kind_of_text(text, quoted), key->name, yolo_config_type_phrase(key->type),
                      key->name, example(key));
}

void yolo_config_format_number(double v, char *buf, size_t size) {
    if (fabs(v) < 1e15 && v == (double)(int64_t)v) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(buf, size, "%.*g", precision, v);
        if (strtod(buf, NULL) == v) break;
    }
}

void yolo_config_describe_range(const yolo_config_key *key, char *buf, size_t size) {
    char lo[40], hi[40];
    yolo_config_format_number(key->min, lo, sizeof lo);
    yolo_config_format_number(key->max, hi, sizeof hi);
    bool has_min = key->flags & YOLO_CONFIG_MIN, has_max = key->flags & YOLO_CONFIG_MAX;
    bool open_lo = key->flags & YOLO_CONFIG_MIN_EXCLUSIVE, open_hi = key->flags & YOLO_CONFIG_MAX_EXCLUSIVE;
    if (has_min && has_max) snprintf(buf, size, "in %s%s, %s%s", open_lo ? "(" : "[", lo, hi, open_hi ? ")" : "]");
    else if (has_min) snprintf(buf, size, "%s %s", open_lo ? ">" : ">=", lo);
    else if (has_max) snprintf(buf, size, "%s %s", open_hi ? "<" : "<=", hi);
    else snprintf(buf, size, "%s", "");
}

static yolo_status range_error(const yolo_config_key *key, const char *text, const char *source) {
    char range[100];
    yolo_config_describe_range(key, range, sizeof range);
    return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s' is out of range; '%s' must be %s", source, key->name, text,
                      key->name, range);
}

static bool in_range(const yolo_config_key *key, double v) {
    if (key->flags & YOLO_CONFIG_MIN) {
        if ((key->flags & YOLO_CONFIG_MIN_EXCLUSIVE) ? !(v > key->min) : !(v >= key->min)) return false;
    }
    if (key->flags & YOLO_CONFIG_MAX) {
        if ((key->flags & YOLO_CONFIG_MAX_EXCLUSIVE) ? !(v < key->max) : !(v <= key->max)) return false;
    }
    return true;
}

/* A text against its key's grammar (keys.c's rules): the rule's error,
 * prefixed with where the value came from. */
static yolo_status check_rule(const yolo_config_key *key, const char *text, const char *source) {
    const yolo_config_rule *rule = yolo_config_find_rule(key->name);
    if (!rule || !rule->check || rule->check(text) == YOLO_OK) return YOLO_OK;
    char why[1024];
    snprintf(why, sizeof why, "%s", yolo_last_error());
    return yolo_error(YOLO_ERR_CONFIG, "%s: %s", source, why);
}

/* Splits "a|b|c" into pointers into `storage`. */
static int split_choices(const char *choices, char *storage, size_t size, const char **out) {
    snprintf(storage, size, "%s", choices);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(storage, "|", &save); tok && n < MAX_CHOICES; tok = strtok_r(NULL, "|", &save))
        out[n++] = tok;
    return n;
}

/* The canonical spelling of `text` among the key's choices, or an error. */
static yolo_status match_choice(const yolo_config_key *key, const char *text, const char *source, const char **out) {
    char storage[1024];
    const char *choices[MAX_CHOICES];
    int n = split_choices(key->choices, storage, sizeof storage, choices);
    for (int i = 0; i < n; i++) {
        if (strcasecmp(choices[i], text) == 0) {
            *out = key->choices + (choices[i] - storage);
            return YOLO_OK;
        }
    }
    char list[1024] = "";
    if (key->type == YOLO_CONFIG_BOOL_OR_STRING) snprintf(list, sizeof list, "true, false"); /* cache, amp */
    for (int i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", choices[i]);
    }
    const char *near = yolo_suggest(text, choices, n);
    if (near != NULL)
        return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s' is not a valid choice; did you mean '%s=%s'? ('%s' must be one of: %s)",
                          source, key->name, text, key->name, near, key->name, list);
    return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s' is not a valid choice; '%s' must be one of: %s", source, key->name,
                      text, key->name, list);
}

static char *dup_text(const char *text, size_t len) {
    char *s = malloc(len + 1);
    if (s != NULL) {
        memcpy(s, text, len);
        s[len] = '\0';
    }
    return s;
}

static yolo_status parse_list(const yolo_config_key *key, const char *text, const char *source, yolo_config_value *out) {
    char buf[4096];
    size_t len = strlen(text);
    if (len >= sizeof buf) return yolo_error(YOLO_ERR_CONFIG, "%s: the value of '%s' is too long", source, key->name);
    memcpy(buf, text, len + 1);
    char *body = buf;
    if (body[0] == '[') {
        if (len < 2 || body[len - 1] != ']') return type_error(key, text, false, source);
        body[len - 1] = '\0';
        body++;
    }
    int64_t items[MAX_LIST];
    int n = 0;
    char *p = body;
    while (*p == ' ') p++;
    if (*p != '\0') {
        for (char *save = NULL, *tok = strtok_r(body, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ') tok++;
            char *end = tok + strlen(tok);
            while (end > tok && end[-1] == ' ') *--end = '\0';
            bool overflow;
            if (n == MAX_LIST) return yolo_error(YOLO_ERR_CONFIG, "%s: '%s' has more than %d items", source, key->name, MAX_LIST);
            if (!parse_int(tok, &items[n], &overflow)) {
                return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s': item '%s' is not an integer; '%s' must be %s (e.g. %s=%s)",
                                          source, key->name, text, tok, key->name, yolo_config_type_phrase(key->type),
                                  key->name, type_example(key->type));
            }
            if (overflow) return overflow_error(key, text, source);
            if (!in_range(key, (double)items[n])) return range_error(key, text, source);
            n++;
        }
    }
    out->kind = YOLO_VALUE_INT_LIST;
    out->n = n;
    out->list = NULL;
    /* freeze=3 (the first 3 layers) and freeze=[3] (layer 3) differ */
    out->b = n == 1 && buf[0] != '[' && strchr(text, ',') == NULL;
    if (n > 0) {
        int64_t *list = malloc((size_t)n * sizeof *list);
        if (list == NULL) return yolo_error(YOLO_ERR_NOMEM, "out of memory parsing '%s'", key->name);
        memcpy(list, items, (size_t)n * sizeof *list);
        out->list = list;
    }
    return YOLO_OK;
}

yolo_status yolo_config_parse_value(const yolo_config_key *key, const char *text, bool quoted, const char *source,
                                    yolo_config_value *out) {
    memset(out, 0, sizeof *out);
    if (text == NULL) text = "";
    if (!quoted && is_null_text(text)) {
        if (key->flags & YOLO_CONFIG_NULLABLE) return YOLO_OK; /* kind NULL */
        return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s' is not allowed; '%s' may not be null, it must be %s (e.g. %s=%s)",
                          source, key->name, text, key->name, yolo_config_type_phrase(key->type), key->name,
                          example(key));
    }
    bool is_bool = !quoted && (strcasecmp(text, "true") == 0 || strcasecmp(text, "false") == 0);
    switch (key->type) {
    case YOLO_CONFIG_BOOL:
        if (!is_bool) return type_error(key, text, quoted, source);
        out->kind = YOLO_VALUE_BOOL;
        out->b = strcasecmp(text, "true") == 0;
        return YOLO_OK;
    case YOLO_CONFIG_BOOL_OR_NUMBER:
        if (is_bool) {
            out->kind = YOLO_VALUE_BOOL;
            out->b = strcasecmp(text, "true") == 0;
            return YOLO_OK;
        }
        goto number;
    case YOLO_CONFIG_NUMBER: /* an integer stays one (batch: 16 is written back as 16) */
        if (!quoted && !is_bool && strpbrk(text, ".eEnN") == NULL) goto integer;
        goto number;
    case YOLO_CONFIG_INT:
    integer: {
        bool overflow;
        if (quoted || !parse_int(text, &out->i, &overflow)) return type_error(key, text, quoted, source);
        if (overflow) return overflow_error(key, text, source);
        if (!in_range(key, (double)out->i)) return range_error(key, text, source);
        out->kind = YOLO_VALUE_INT;
        return YOLO_OK;
    }
    case YOLO_CONFIG_FLOAT:
    number:
        if (quoted || !parse_float(text, &out->f)) return type_error(key, text, quoted, source);
        if (!isfinite(out->f))
            return yolo_error(YOLO_ERR_CONFIG, "%s: '%s=%s' is out of range; '%s' must be a finite number", source,
                              key->name, text, key->name);
        if (!in_range(key, out->f)) return range_error(key, text, source);
        out->kind = YOLO_VALUE_FLOAT;
        if (key->type == YOLO_CONFIG_NUMBER && out->f == floor(out->f) && fabs(out->f) < 9e15) {
            out->i = (int64_t)out->f; /* 16.0 is 16: written back as an integer, which other tools expect */
            out->kind = YOLO_VALUE_INT;
        }
        return YOLO_OK;
    case YOLO_CONFIG_BOOL_OR_STRING:
        if (is_bool) {
            out->kind = YOLO_VALUE_BOOL;
            out->b = strcasecmp(text, "true") == 0;
            return YOLO_OK;
        }
        __attribute__((fallthrough)); /* any other text */
    case YOLO_CONFIG_STRING: {
        const char *canonical = text;
        if (key->choices != NULL) {
            yolo_status st = match_choice(key, text, source, &canonical);
            if (st != YOLO_OK) return st;
            const char *end = strchr(canonical, '|');
            size_t len = end ? (size_t)(end - canonical) : strlen(canonical);
            out->s = dup_text(canonical, len);
        } else {
            out->s = dup_text(text, strlen(text));
        }
        if (out->s == NULL) return yolo_error(YOLO_ERR_NOMEM, "out of memory parsing '%s'", key->name);
        out->kind = YOLO_VALUE_STRING;
        yolo_status st = check_rule(key, out->s, source);
        if (st != YOLO_OK) yolo_config_value_clear(out);
        return st;
    }
    case YOLO_CONFIG_INT_LIST:
        if (quoted || is_bool) return type_error(key, text, quoted, source);
        return parse_list(key, text, source, out);
    }
    return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' has an invalid type (%d)", source, key->name, (int)key->type);
}

void yolo_config_value_clear(yolo_config_value *v) {
    free((void *)v->s);
    free((void *)v->list);
    memset(v, 0, sizeof *v);
}

yolo_status yolo_config_value_copy(yolo_config_value *dst, const yolo_config_value *src) {
    *dst = *src;
    dst->s = NULL;
    dst->list = NULL;
    if (src->s != NULL && (dst->s = dup_text(src->s, strlen(src->s))) == NULL) goto nomem;
    if (src->n > 0) {
        int64_t *list = malloc((size_t)src->n * sizeof *list);
        if (list == NULL) goto nomem;
        memcpy(list, src->list, (size_t)src->n * sizeof *list);
        dst->list = list;
    }
    return YOLO_OK;
nomem:
    yolo_config_value_clear(dst);
    return yolo_error(YOLO_ERR_NOMEM, "out of memory copying a configuration value");
}

bool yolo_config_value_equal(const yolo_config_value *a, const yolo_config_value *b) {
    if (a->kind != b->kind) {
        /* 3 and 3.0 are the same number */
        if (a->kind == YOLO_VALUE_INT && b->kind == YOLO_VALUE_FLOAT) return (double)a->i == b->f;
        if (a->kind == YOLO_VALUE_FLOAT && b->kind == YOLO_VALUE_INT) return a->f == (double)b->i;
        return false;
    }
    switch (a->kind) {
    case YOLO_VALUE_NULL: return true;
    case YOLO_VALUE_BOOL: return a->b == b->b;
    case YOLO_VALUE_INT: return a->i == b->i;
    case YOLO_VALUE_FLOAT: return a->f == b->f;
    case YOLO_VALUE_STRING: return strcmp(a->s, b->s) == 0;
    case YOLO_VALUE_INT_LIST:
        return a->n == b->n && a->b == b->b && (a->n == 0 || memcmp(a->list, b->list, (size_t)a->n * sizeof *a->list) == 0);
    }
    return false;
}

/* A text that reads back as the same text (not as null, bool or a number)
 * and needs no yaml quoting. */
static bool plain_safe(const char *s) {
    if (s[0] == '\0' || strcmp(kind_of_text(s, false), "text") != 0) return false;
    if (strchr("-?:,[]{}#&*!|>'\"%@`~ ", s[0]) != NULL) return false;
    size_t len = strlen(s);
    if (s[len - 1] == ' ' || s[len - 1] == ':') return false;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f) return false;
        if (c == ':' && p[1] == ' ') return false;
        if (c == '#' && p > s && p[-1] == ' ') return false;
    }
    return true;
}

int yolo_config_value_format(const yolo_config_value *v, char *buf, size_t size) {
    char num[40];
    switch (v->kind) {
    case YOLO_VALUE_NULL: return snprintf(buf, size, "null");
    case YOLO_VALUE_BOOL: return snprintf(buf, size, "%s", v->b ? "true" : "false");
    case YOLO_VALUE_INT: return snprintf(buf, size, "%" PRId64, v->i);
    case YOLO_VALUE_FLOAT:
        yolo_config_format_number(v->f, num, sizeof num);
        /* keep it a float when read back: 3 -> 3.0 */
        return snprintf(buf, size, "%s%s", num, strpbrk(num, ".eE") ? "" : ".0");
    case YOLO_VALUE_STRING: {
        if (plain_safe(v->s)) return snprintf(buf, size, "%s", v->s);
        /* double-quoted yaml scalar */
        int total = 0;
        char tmp[8];
        total += snprintf(buf, size, "\"");
        for (const char *p = v->s; *p; p++) {
            unsigned char c = (unsigned char)*p;
            if (c == '"' || c == '\\') snprintf(tmp, sizeof tmp, "\\%c", c);
            else if (c < 0x20 || c == 0x7f) snprintf(tmp, sizeof tmp, "\\x%02x", c);
            else snprintf(tmp, sizeof tmp, "%c", c);
            total += snprintf(buf + ((size_t)total < size ? (size_t)total : size),
                              (size_t)total < size ? size - (size_t)total : 0, "%s", tmp);
        }
        total += snprintf(buf + ((size_t)total < size ? (size_t)total : size), (size_t)total < size ? size - (size_t)total : 0,
                          "\"");
        return total;
    }
    case YOLO_VALUE_INT_LIST: {
        if (v->b && v->n == 1) return snprintf(buf, size, "%" PRId64, v->list[0]);
        int total = snprintf(buf, size, "[");
        for (int i = 0; i < v->n; i++) {
            size_t at = (size_t)total < size ? (size_t)total : size;
            total += snprintf(buf + at, size - at, "%s%" PRId64, i ? ", " : "", v->list[i]);
        }
        size_t at = (size_t)total < size ? (size_t)total : size;
        total += snprintf(buf + at, size - at, "]");
        return total;
    }
    }
    return snprintf(buf, size, "null");
}

yolo_status yolo_config_check_definition(const yolo_config_key *key, const char *owner) {
    const char *name = key->name;
    if (name == NULL || name[0] == '\0') return yolo_error(YOLO_ERR_CONFIG, "%s: a configuration key has no name", owner);
    if (!(islower((unsigned char)name[0]) || name[0] == '_'))
        return yolo_error(YOLO_ERR_CONFIG, "%s: key name '%s' must start with a lower-case letter or '_'", owner, name);
    for (const char *p = name; *p; p++) {
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
            return yolo_error(YOLO_ERR_CONFIG, "%s: key name '%s' may hold only a-z, 0-9 and '_'", owner, name);
    }
    if (strlen(name) > 48) return yolo_error(YOLO_ERR_CONFIG, "%s: key name '%s' is longer than 48 characters", owner, name);
    if (key->type < YOLO_CONFIG_BOOL || key->type > YOLO_CONFIG_INT_LIST)
        return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' has an invalid type (%d)", owner, name, (int)key->type);
    if ((key->flags & YOLO_CONFIG_MIN_EXCLUSIVE) && !(key->flags & YOLO_CONFIG_MIN))
        return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' has YOLO_CONFIG_MIN_EXCLUSIVE without YOLO_CONFIG_MIN", owner, name);
    if ((key->flags & YOLO_CONFIG_MAX_EXCLUSIVE) && !(key->flags & YOLO_CONFIG_MAX))
        return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' has YOLO_CONFIG_MAX_EXCLUSIVE without YOLO_CONFIG_MAX", owner, name);
    if ((key->flags & YOLO_CONFIG_MIN) && (key->flags & YOLO_CONFIG_MAX) && !(key->min <= key->max))
        return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' has min %g > max %g", owner, name, key->min, key->max);
    if (key->choices != NULL && key->type != YOLO_CONFIG_STRING && key->type != YOLO_CONFIG_BOOL_OR_STRING)
        return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' has choices but is not a text key", owner, name);
    if (key->choices != NULL && (key->choices[0] == '\0' || strlen(key->choices) >= 1024))
        return yolo_error(YOLO_ERR_CONFIG, "%s: key '%s' has an empty or over-long choices list", owner, name);
    return YOLO_OK;
}
