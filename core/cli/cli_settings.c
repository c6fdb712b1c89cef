/* Ultralytics' special commands besides help, checks and version:
 *   yolo settings   where datasets, caches and runs go, and from what
 *   yolo cfg        the default configuration (default.yaml)
 *   yolo copy-cfg   default.yaml copied to ./default_copy.yaml, for cfg=
 * `yolo settings key=value` writes Ultralytics' settings.json there; here
 * that file is read (its datasets_dir) but never written: its tools own it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "data/datasets_dir.h"
#include "data/fsutil.h"
#include "util/embedded.h"

static int settings(const yolo_cli_args *args, FILE *out) {
    if (args->n_pairs > 0 || args->n_words > 1) {
        fprintf(stderr, "yolo: configuration error: 'yolo settings' only shows the settings: Ultralytics' "
                        "settings.json is read here (its datasets_dir) but never written, since its own tools read "
                        "it; set YOLO_DATASETS_DIR=... (datasets) or YOLO_CACHE_DIR=... (caches) instead\n");
        return YOLO_EXIT_USAGE;
    }
    char json[1024];
    bool have_json = yolo_ultralytics_settings_path(json, sizeof json);
    const char *from = NULL;
    char *datasets = yolo_datasets_dir(&from), *cache = yolo_cache_dir();
    fprintf(out, "datasets_dir: %s", datasets ? datasets : "(none)");
    if (datasets) fprintf(out, " (from %s)\n", from);
    else fprintf(out, " (set YOLO_DATASETS_DIR, or datasets_dir in Ultralytics' settings.json; a data yaml's relative "
                      "path: is then looked up beside the yaml and in the working directory)\n");
    fprintf(out, "settings.json: %s\n", have_json ? json : "(none found: $YOLO_CONFIG_DIR, ~/.config/Ultralytics)");
    fprintf(out, "cache_dir: %s (%s: generated datasets, label caches of read-only datasets)\n", cache ? cache : "?",
            getenv("YOLO_CACHE_DIR") && getenv("YOLO_CACHE_DIR")[0] ? "YOLO_CACHE_DIR" : "default; YOLO_CACHE_DIR sets it");
    fprintf(out, "runs_dir: runs (project=DIR name=NAME place a run elsewhere)\n");
    free(datasets);
    free(cache);
    return YOLO_EXIT_OK;
}

static int print_cfg(FILE *out) {
    size_t size = 0;
    const char *text = yolo_embedded_file("default.yaml", &size);
    if (!text) {
        fprintf(stderr, "yolo: default.yaml is not embedded in this build\n");
        return YOLO_EXIT_FAILURE;
    }
    fwrite(text, 1, size, out);
    return YOLO_EXIT_OK;
}

static int copy_cfg(FILE *out) {
    size_t size = 0;
    const char *text = yolo_embedded_file("default.yaml", &size);
    char cwd[4096];
    if (!text || !getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "yolo: cannot read default.yaml or the working directory\n");
        return YOLO_EXIT_FAILURE;
    }
    char *path = yolo_path_join(cwd, "default_copy.yaml");
    FILE *f = path ? fopen(path, "w") : NULL;
    bool ok = f && fwrite(text, 1, size, f) == size;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) {
        fprintf(stderr, "yolo: I/O error: %s: cannot write\n", path ? path : "default_copy.yaml");
        free(path);
        return YOLO_EXIT_FAILURE;
    }
    fprintf(out, "default.yaml copied to %s\nExample YOLO command with this new custom cfg:\n    yolo cfg='%s' "
                 "imgsz=320 batch=8\n", path, path);
    free(path);
    return YOLO_EXIT_OK;
}

int yolo_cli_is_command(const char *word) {
    return strcmp(word, "settings") == 0 || strcmp(word, "cfg") == 0 || strcmp(word, "copy-cfg") == 0;
}

int yolo_cli_command(const yolo_cli_args *args, FILE *out) {
    const char *word = args->words[0];
    if (strcmp(word, "settings") == 0) return settings(args, out);
    if (args->n_pairs > 0 || args->n_words > 1 || args->task) {
        fprintf(stderr, "yolo: configuration error: 'yolo %s' takes no arguments\n", word);
        return YOLO_EXIT_USAGE;
    }
    return strcmp(word, "cfg") == 0 ? print_cfg(out) : copy_cfg(out);
}
