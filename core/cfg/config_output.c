/* Writing the merged configuration: args.yaml and the run directory. */
#include "cfg/config_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Ultralytics' `yolo cfg=args.yaml` refuses a key it lacks, so args.yaml
 * lists those (yolo_core_keys_beyond_ultralytics) only where they hold
 * another value than the default: the args.yaml of a run that used none of
 * them is one Ultralytics takes. A key left out reads back as its default. */
static bool left_out(const yolo_config_key *key, const yolo_config_value *value) {
    bool beyond = false;
    for (int i = 0; yolo_core_keys_beyond_ultralytics[i] && !beyond; i++)
        beyond = strcmp(key->name, yolo_core_keys_beyond_ultralytics[i]) == 0;
    if (!beyond) return false;
    yolo_config_value def;
    if (yolo_config_parse_value(key, key->default_value ? key->default_value : "", false, "default.yaml", &def)) {
        yolo_error_clear();
        return false;
    }
    bool same = yolo_config_value_equal(value, &def);
    yolo_config_value_clear(&def);
    return same;
}

yolo_status yolo_config_to_yaml(const yolo_config *cfg, char **text_out, size_t *size_out) {
    *text_out = NULL;
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (text == NULL) return yolo_error(YOLO_ERR_NOMEM, "out of memory writing the configuration");
    text[0] = '\0';
    int n = yolo_config_key_count(cfg);
    for (int i = 0; i < n; i++) {
        const yolo_config_key *key = yolo_config_key_at(cfg, i);
        yolo_config_value value;
        yolo_config_get(cfg, key->name, &value);
        if (left_out(key, &value)) continue;
        int vlen = yolo_config_value_format(&value, NULL, 0);
        size_t need = len + strlen(key->name) + (size_t)vlen + 4;
        if (need > cap) {
            while (cap < need) cap *= 2;
            char *grown = realloc(text, cap);
            if (grown == NULL) {
                free(text);
                return yolo_error(YOLO_ERR_NOMEM, "out of memory writing the configuration");
            }
            text = grown;
        }
        len += (size_t)snprintf(text + len, cap - len, "%s: ", key->name);
        len += (size_t)yolo_config_value_format(&value, text + len, cap - len);
        text[len++] = '\n';
        text[len] = '\0';
    }
    *text_out = text;
    if (size_out != NULL) *size_out = len;
    return YOLO_OK;
}

/* mkdir -p of every directory above `path`'s last component. */
static yolo_status make_parents(const char *path) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return yolo_error(YOLO_ERR_ARG, "run directory path is too long: %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return yolo_error(YOLO_ERR_IO, "%s: cannot create directory: %m", buf);
        *p = '/';
    }
    return YOLO_OK;
}

yolo_status yolo_config_make_run_dir(yolo_config *cfg, char *dir, size_t size) {
    const char *project, *name, *task, *mode;
    bool exist_ok;
    yolo_status st;
    if ((st = yolo_config_get_string(cfg, "project", &project)) != YOLO_OK ||
        (st = yolo_config_get_string(cfg, "name", &name)) != YOLO_OK ||
        (st = yolo_config_get_string(cfg, "task", &task)) != YOLO_OK ||
        (st = yolo_config_get_string(cfg, "mode", &mode)) != YOLO_OK ||
        (st = yolo_config_get_bool(cfg, "exist_ok", &exist_ok)) != YOLO_OK)
        return st;
    char project_dir[2048], base[4096], chosen[4112];
    if (project != NULL) snprintf(project_dir, sizeof project_dir, "%s", project);
    else snprintf(project_dir, sizeof project_dir, "runs/%s", task);
    if (name == NULL) name = mode;
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return yolo_error(YOLO_ERR_CONFIG, "'name=%s' is not a usable run name", name);
    if (snprintf(base, sizeof base, "%s/%s", project_dir, name) >= (int)sizeof base)
        return yolo_error(YOLO_ERR_ARG, "run directory path is too long: %s/%s", project_dir, name);
    if ((st = make_parents(base)) != YOLO_OK) return st;

    const char *used_name = name;
    char numbered[2064];
    snprintf(chosen, sizeof chosen, "%s", base);
    for (int k = 1;; k++) {
        if (k > 1) {
            snprintf(chosen, sizeof chosen, "%s%d", base, k);
            snprintf(numbered, sizeof numbered, "%s%d", name, k);
            used_name = numbered;
        }
        if (mkdir(chosen, 0777) == 0) break;
        if (errno != EEXIST) return yolo_error(YOLO_ERR_IO, "%s: cannot create run directory: %m", chosen);
        struct stat sb;
        if (exist_ok) {
            if (stat(chosen, &sb) != 0 || !S_ISDIR(sb.st_mode))
                return yolo_error(YOLO_ERR_IO, "%s exists and is not a directory", chosen);
            break;
        }
        if (k >= 9999) return yolo_error(YOLO_ERR_IO, "%s: no free run name up to %s9999", base, name);
    }
    if ((size_t)snprintf(dir, size, "%s", chosen) >= size)
        return yolo_error(YOLO_ERR_ARG, "run directory %s does not fit a %zu-byte buffer", chosen, size);
    if (used_name != name || yolo_config_is_null(cfg, "name")) {
        st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "name", used_name, "run directory");
        if (st != YOLO_OK) return st;
    }
    return YOLO_OK;
}

yolo_status yolo_config_save_args(const yolo_config *cfg, const char *dir) {
    char path[4096], tmp[4200];
    if (snprintf(path, sizeof path, "%s/args.yaml", dir) >= (int)sizeof path)
        return yolo_error(YOLO_ERR_ARG, "path too long: %s/args.yaml", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    char *text;
    size_t size;
    yolo_status st = yolo_config_to_yaml(cfg, &text, &size);
    if (st != YOLO_OK) return st;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        free(text);
        return yolo_error(YOLO_ERR_IO, "%s: cannot create: %m", tmp);
    }
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, text + done, size - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        done += (size_t)w;
    }
    free(text);
    if (done < size || fsync(fd) != 0) {
        st = yolo_error(YOLO_ERR_IO, "%s: write failed: %m", tmp);
        close(fd);
        unlink(tmp);
        return st;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        st = yolo_error(YOLO_ERR_IO, "%s: cannot write: %m", path);
        unlink(tmp);
        return st;
    }
    return YOLO_OK;
}
