/* Splitting the command line into task, mode, key=value pairs and words. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static char *store(yolo_cli_args *a, size_t *used, const char *text, size_t len) {
    if (*used + len + 1 > sizeof a->storage) return NULL;
    char *s = a->storage + *used;
    memcpy(s, text, len);
    s[len] = '\0';
    *used += len + 1;
    return s;
}

static yolo_status set_task(yolo_cli_args *a, const char *task, const char *from) {
    if (task[0] == '\0') return yolo_error(YOLO_ERR_CONFIG, "%s needs a task name (e.g. --task detect)", from);
    if (a->task != NULL && strcmp(a->task, task) != 0)
        return yolo_error(YOLO_ERR_CONFIG, "two tasks given: '%s' (%s) and '%s' (%s)", a->task, a->task_from, task, from);
    a->task = task;
    a->task_from = from;
    return YOLO_OK;
}

static yolo_status set_mode(yolo_cli_args *a, const char *mode) {
    if (a->mode != NULL && strcmp(a->mode, mode) != 0)
        return yolo_error(YOLO_ERR_CONFIG, "two modes given: '%s' and '%s'; give one of %s", a->mode, mode,
                          yolo_cli_mode_names());
    a->mode = mode;
    return YOLO_OK;
}

yolo_status yolo_cli_parse(int argc, char **argv, yolo_cli_args *a) {
    memset(a, 0, sizeof *a);
    size_t used = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        yolo_status st = YOLO_OK;
        if (strcmp(arg, "--task") == 0) {
            if (i + 1 >= argc) return yolo_error(YOLO_ERR_CONFIG, "--task needs a task name (e.g. --task detect)");
            st = set_task(a, argv[++i], "--task");
        } else if (strncmp(arg, "--task=", 7) == 0) {
            st = set_task(a, arg + 7, "--task");
        } else if (strcmp(arg, "help") == 0 || strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            a->help = 1;
        } else if (strcmp(arg, "version") == 0 || strcmp(arg, "--version") == 0) {
            a->version = 1;
        } else if (strchr(arg, '=') != NULL) {
            const char *text = arg;
            if (strncmp(text, "--", 2) == 0) text += 2; /* --epochs=3 reads as epochs=3 */
            const char *eq = strchr(text, '=');
            if (eq == text)
                return yolo_error(YOLO_ERR_CONFIG, "'%s' has no key; write key=value without spaces (e.g. epochs=3)", arg);
            if (eq[1] == '\0')
                return yolo_error(YOLO_ERR_CONFIG, "'%s' has no value; write key=value without spaces (e.g. %.*s=VALUE)",
                                  arg, (int)(eq - text), text);
            if (a->n_pairs == YOLO_CLI_MAX_ARGS) return yolo_error(YOLO_ERR_CONFIG, "too many arguments");
            const char *key = store(a, &used, text, (size_t)(eq - text));
            const char *value = store(a, &used, eq + 1, strlen(eq + 1));
            if (key == NULL || value == NULL) return yolo_error(YOLO_ERR_CONFIG, "the command line is too long");
            if (strcmp(key, "task") == 0) st = set_task(a, value, "task=");
            else if (strcmp(key, "mode") == 0 && yolo_cli_is_mode(value)) st = set_mode(a, value);
            a->keys[a->n_pairs] = key;
            a->values[a->n_pairs] = value;
            a->n_pairs++;
        } else if (strcmp(arg, "=") == 0) {
            return yolo_error(YOLO_ERR_CONFIG, "a lone '=': write key=value without spaces (e.g. epochs=3)");
        } else if (strncmp(arg, "-", 1) == 0) {
            return yolo_error(YOLO_ERR_CONFIG, "unknown option '%s'; arguments are key=value without dashes (see 'yolo help')",
                              arg);
        } else if (yolo_cli_is_mode(arg)) {
            st = set_mode(a, arg);
        } else if (a->help && a->help_topic == NULL && a->mode == NULL) {
            a->help_topic = arg; /* yolo help epochs */
        } else {
            if (a->n_words == YOLO_CLI_MAX_ARGS) return yolo_error(YOLO_ERR_CONFIG, "too many arguments");
            a->words[a->n_words++] = arg;
        }
        if (st != YOLO_OK) return st;
    }
    return YOLO_OK;
}
