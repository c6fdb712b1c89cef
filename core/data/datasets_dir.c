/* The datasets folder (datasets_dir.h). */
#include "data/datasets_dir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/json.h"
#include "data/fsutil.h"
#include "util/text_file.h"

bool yolo_ultralytics_settings_path(char *buf, size_t size) {
    const char *config = getenv("YOLO_CONFIG_DIR"), *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    char candidates[3][1024];
    int n = 0;
    if (config && config[0]) {
        snprintf(candidates[n++], sizeof candidates[0], "%s/settings.json", config);
        snprintf(candidates[n++], sizeof candidates[0], "%s/Ultralytics/settings.json", config);
    }
    if (xdg && xdg[0]) snprintf(candidates[n++], sizeof candidates[0], "%s/Ultralytics/settings.json", xdg);
    else if (home && home[0]) snprintf(candidates[n++], sizeof candidates[0], "%s/.config/Ultralytics/settings.json", home);
    for (int i = 0; i < n; i++)
        if (yolo_is_file(candidates[i])) {
            snprintf(buf, size, "%s", candidates[i]);
            return true;
        }
    return false;
}

char *yolo_json_string_value(const char *json, const char *key) {
    yolo_json *doc = NULL;
    if (yolo_json_parse(json, strlen(json), "settings.json", &doc) != YOLO_OK) {
        yolo_error_clear(); /* malformed: as if the key were absent */
        return NULL;
    }
    const yolo_json *v = yolo_json_get(doc, key);
    char *out = v && v->kind == YOLO_JSON_STRING ? strdup(v->s) : NULL;
    yolo_json_free(doc);
    return out;
}

char *yolo_datasets_dir(const char **from) {
    static char settings[1024];
    const char *env = getenv("YOLO_DATASETS_DIR");
    if (env && env[0]) {
        if (from) *from = "YOLO_DATASETS_DIR";
        return strdup(env);
    }
    if (!yolo_ultralytics_settings_path(settings, sizeof settings)) return NULL;
    char *z = NULL;
    size_t len = 0;
    if (yolo_read_text_file(settings, "Ultralytics' settings", &z, &len) != YOLO_OK) return NULL; /* as if absent */
    char *dir = yolo_json_string_value(z, "datasets_dir");
    free(z);
    if (dir && !dir[0]) {
        free(dir);
        dir = NULL;
    }
    if (dir && from) *from = settings;
    return dir;
}
