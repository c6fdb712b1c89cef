/* The datasets folder, where a data yaml's relative `path:` and a bare
 * data=name are looked up (Ultralytics' DATASETS_DIR): $YOLO_DATASETS_DIR,
 * else the datasets_dir of Ultralytics' own settings.json, so a user's
 * `yolo settings datasets_dir=...` there is honoured here too. The file is
 * only read, never written: Ultralytics' tools own it. */
#ifndef YOLO_DATA_DATASETS_DIR_H
#define YOLO_DATA_DATASETS_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* The folder (malloc'd) or NULL when neither names one; *from (may be NULL)
 * gets "YOLO_DATASETS_DIR" or the settings.json path (static storage). */
char *yolo_datasets_dir(const char **from);

/* Ultralytics' settings.json, the first that exists of
 * $YOLO_CONFIG_DIR/settings.json, $YOLO_CONFIG_DIR/Ultralytics/settings.json
 * and ${XDG_CONFIG_HOME:-~/.config}/Ultralytics/settings.json (the places
 * its versions have used); false when none does. */
bool yolo_ultralytics_settings_path(char *buf, size_t size);

/* The string value of `key` in a JSON object's text (its escapes decoded,
 * malloc'd; parsed by ckpt/json.h), or NULL when the text is not valid
 * JSON or the key is absent or not a string. */
char *yolo_json_string_value(const char *json, const char *key);

#endif
