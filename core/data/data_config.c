/* Resolving data= into file lists (rules in data_config.h). */
#include "data/data_config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "data/datasets_dir.h"
#include "data/fsutil.h"
#include "data/shapes.h"
#include "util/text_file.h"

const char *yolo_split_name(yolo_split split) {
    static const char *names[] = {"train", "val", "test"};
    return split >= 0 && split < YOLO_SPLIT_COUNT ? names[split] : "?";
}

void yolo_data_config_free(yolo_data_config *c) {
    if (!c)
        return;
    free(c->source);
    free(c->yaml_path);
    yolo_vfs_free(c->vfs);
    free(c->root);
    for (int s = 0; s < YOLO_SPLIT_COUNT; s++)
        yolo_free_strings(c->split_paths[s], c->n_split_paths[s]);
    yolo_free_strings(c->names, c->nc);
    free(c->flip_idx);
    yolo_free_strings(c->class_dirs, c->nc);
    memset(c, 0, sizeof *c);
}

/* ---- yaml helpers --------------------------------------------------------- */

typedef struct yaml_doc {
    yaml_document_t doc;
    const char *file;
} yaml_doc;

static yaml_node_t *map_get(yaml_doc *y, yaml_node_t *map, const char *key) {
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(&y->doc, p->value);
    }
    return NULL;
}

static const char *scalar(yaml_node_t *n) {
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *v = (const char *)n->data.scalar.value;
    /* plain null spellings mean "absent" */
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (!v[0] || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "None") == 0))
        return NULL;
    return v;
}

static int line_of(yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 0; }

/* A node that must be one text: *out is its text (NULL when absent or
 * null); a list or mapping is an error naming the file, line and `what`,
 * never skipped (Ultralytics would take str() of it). */
static yolo_status text_of(yaml_doc *y, yaml_node_t *n, const char *what, const char **out) {
    *out = scalar(n);
    if (!n || n->type == YAML_SCALAR_NODE)
        return YOLO_OK;
    return yolo_error(YOLO_ERR_CONFIG, "%s:%d: %s: expected a text, not a %s", y->file, line_of(n), what,
                      n->type == YAML_SEQUENCE_NODE ? "list" : "mapping");
}

/* An integer in [lo, hi]; out of range (or past long) is an error naming it. */
static yolo_status parse_int(yaml_doc *y, yaml_node_t *n, const char *key, long lo, long hi, int *out) {
    const char *s = scalar(n);
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || end == s)
        return yolo_error(YOLO_ERR_CONFIG, "%s:%d: %s: expected an integer, got '%.64s'", y->file, line_of(n), key,
                          s ? s : "");
    if (errno == ERANGE || v < lo || v > hi)
        return yolo_error(YOLO_ERR_CONFIG, "%s:%d: %s: %.64s is outside [%ld, %ld]", y->file, line_of(n), key, s, lo, hi);
    *out = (int)v;
    return YOLO_OK;
}

static yolo_status load_yaml(const char *path, yaml_doc *y) {
    char *text;
    size_t len;
    yolo_status st = yolo_read_text_file(path, "the data yaml", &text, &len);
    if (st != YOLO_OK)
        return st;
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    y->file = path;
    if (!yaml_parser_load(&parser, &y->doc)) {
        st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: yaml: %s", path, (int)parser.problem_mark.line + 1,
                        parser.problem ? parser.problem : "syntax error");
        yaml_parser_delete(&parser);
        free(text);
        return st;
    }
    yaml_parser_delete(&parser);
    free(text);
    yaml_node_t *root = yaml_document_get_root_node(&y->doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        yaml_document_delete(&y->doc);
        return yolo_error(YOLO_ERR_FORMAT, "%s: a data yaml must be a mapping (path, train, val, names)", path);
    }
    return YOLO_OK;
}

/* names: a list, or a mapping index -> name (indices 0..nc-1, any order). */
static yolo_status parse_names(yaml_doc *y, yaml_node_t *n, yolo_data_config *c) {
    if (n->type == YAML_SEQUENCE_NODE) {
        int count = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
        if (count > YOLO_DATA_MAX_CLASSES)
            return yolo_error(YOLO_ERR_CONFIG, "%s:%d: names: %d entries, more than the %d classes supported", y->file,
                              line_of(n), count, YOLO_DATA_MAX_CLASSES);
        c->names = calloc((size_t)count + 1, sizeof(char *));
        if (!c->names)
            return yolo_error(YOLO_ERR_NOMEM, "names");
        c->nc = count;
        for (int i = 0; i < count; i++) {
            char what[48];
            snprintf(what, sizeof what, "names: entry %d (class %d)", i + 1, i);
            const char *v;
            yolo_status st = text_of(y, yaml_document_get_node(&y->doc, n->data.sequence.items.start[i]), what, &v);
            if (st != YOLO_OK)
                return st;
            c->names[i] = strdup(v ? v : "");
        }
        return YOLO_OK;
    }
    if (n->type != YAML_MAPPING_NODE)
        return yolo_error(YOLO_ERR_CONFIG, "%s:%d: names: expected a list or a mapping", y->file, line_of(n));
    int count = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (count > YOLO_DATA_MAX_CLASSES)
        return yolo_error(YOLO_ERR_CONFIG, "%s:%d: names: %d entries, more than the %d classes supported", y->file,
                          line_of(n), count, YOLO_DATA_MAX_CLASSES);
    c->names = calloc((size_t)count + 1, sizeof(char *));
    if (!c->names)
        return yolo_error(YOLO_ERR_NOMEM, "names");
    c->nc = count;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
        int idx;
        yolo_status st = parse_int(y, k, "names", INT_MIN, INT_MAX, &idx);
        if (st != YOLO_OK)
            return st;
        if (idx < 0 || idx >= count)
            return yolo_error(YOLO_ERR_CONFIG, "%s:%d: names: index %d out of range 0..%d", y->file, line_of(k), idx,
                              count - 1);
        if (c->names[idx])
            return yolo_error(YOLO_ERR_CONFIG, "%s:%d: names: index %d given twice", y->file, line_of(k), idx);
        char what[48];
        snprintf(what, sizeof what, "names: class %d", idx);
        const char *v;
        st = text_of(y, yaml_document_get_node(&y->doc, p->value), what, &v);
        if (st != YOLO_OK)
            return st;
        c->names[idx] = strdup(v ? v : "");
    }
    return YOLO_OK;
}

/* ---- path resolution ------------------------------------------------------ */

static bool vfs_exists(const yolo_vfs *v, const char *p) { return yolo_vfs_is_dir(v, p) || yolo_vfs_is_file(v, p); }

/* Resolves one split entry: against root, then (folders only) the yaml's folder. */
static char *resolve_entry(const yolo_data_config *c, const char *entry, const char *yaml_dir) {
    char *p = yolo_path_join(c->root, entry);
    if (!p || vfs_exists(c->vfs, p))
        return p;
    /* Roboflow's exports put data.yaml in the dataset folder with train:
     * ../train/images; Ultralytics, finding no such folder, drops the ../ */
    if (strncmp(entry, "../", 3) == 0) {
        char *r = yolo_path_join(c->root, entry + 3);
        if (r && vfs_exists(c->vfs, r)) {
            free(p);
            return r;
        }
        free(r);
    }
    if (yolo_vfs_is_archive(c->vfs) || !yaml_dir)
        return p;
    char *q = yolo_path_join(yaml_dir, entry);
    if (q && vfs_exists(c->vfs, q)) {
        free(p);
        return q;
    }
    free(q);
    return p; /* reported missing later, naming the root-relative path */
}

static yolo_status add_split(yolo_data_config *c, yolo_split s, char *path) {
    if (!path)
        return yolo_error(YOLO_ERR_NOMEM, "split path");
    char **v = realloc(c->split_paths[s], sizeof(char *) * (size_t)(c->n_split_paths[s] + 1));
    if (!v) {
        free(path);
        return yolo_error(YOLO_ERR_NOMEM, "split path");
    }
    v[c->n_split_paths[s]++] = path;
    c->split_paths[s] = v;
    return YOLO_OK;
}

/* Opens the root named by `path` (a folder or an archive). */
static yolo_status open_root(yolo_data_config *c, const char *path) {
    bool archive = yolo_is_file(path) && yolo_path_is_archive(path);
    char *zip = NULL;
    if (!archive && !yolo_is_dir(path)) {
        size_t n = strlen(path) + 5;
        zip = malloc(n);
        if (zip)
            snprintf(zip, n, "%s.zip", path);
        if (zip && yolo_is_file(zip)) {
            path = zip;
            archive = true;
        } else {
            free(zip);
            return yolo_error(YOLO_ERR_IO, "dataset root %s: no such folder or archive", path);
        }
    }
    yolo_status st = yolo_vfs_open(archive ? path : NULL, &c->vfs);
    if (st == YOLO_OK && archive) {
        /* a single top folder is the root only if it looks like a dataset
         * (an archive holding just train/ must not take train/ as root) */
        const char *top = yolo_vfs_top_folder(c->vfs);
        static const char *marks[] = {"images", "labels", "train", "val", "test"};
        bool dataset_like = false;
        for (size_t i = 0; top[0] && i < sizeof marks / sizeof marks[0] && !dataset_like; i++) {
            char *p = yolo_path_join(top, marks[i]);
            dataset_like = p && yolo_vfs_is_dir(c->vfs, p);
            free(p);
        }
        c->root = strdup(dataset_like ? top : "");
    } else if (st == YOLO_OK) {
        c->root = strdup(path);
    }
    free(zip);
    return st;
}

/* `path:` relative -> the yaml's folder, the datasets folder (datasets_dir.h), the working directory. */
static char *resolve_root(const char *path, const char *yaml_dir) {
    if (path[0] == '/')
        return strdup(path);
    char *datasets = yolo_datasets_dir(NULL);
    const char *bases[3] = {yaml_dir, datasets, "."};
    char *found = NULL;
    for (int i = 0; i < 3 && !found; i++) {
        if (!bases[i] || !bases[i][0])
            continue;
        char *p = yolo_path_join(bases[i], path);
        if (p && (yolo_is_dir(p) || yolo_is_file(p))) {
            found = p;
            break;
        }
        size_t n = p ? strlen(p) + 5 : 0;
        char *z = p ? malloc(n) : NULL;
        if (z) {
            snprintf(z, n, "%s.zip", p);
            if (yolo_is_file(z))
                found = p; /* open_root switches to the .zip */
        }
        free(z);
        if (!found)
            free(p);
    }
    free(datasets);
    return found ? found : yolo_path_join(yaml_dir, path);
}

/* Image-folder classes: sorted sub-folders of the train split. */
static yolo_status classes_from_folders(yolo_data_config *c) {
    const char *train = c->n_split_paths[YOLO_SPLIT_TRAIN] ? c->split_paths[YOLO_SPLIT_TRAIN][0] : NULL;
    if (!train)
        return yolo_error(YOLO_ERR_CONFIG, "%s: no train split to take classes from", c->source);
    char **files;
    int64_t n;
    yolo_status st = yolo_vfs_list(c->vfs, train, &files, &n);
    if (st != YOLO_OK)
        return st;
    size_t tl = strlen(train);
    while (tl > 0 && train[tl - 1] == '/')
        tl--;
    char **names = NULL;
    int nc = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *rel = files[i] + tl + (tl > 0 ? 1 : 0);
        const char *slash = strchr(rel, '/');
        if (!slash || !yolo_path_is_image(rel))
            continue;
        size_t len = (size_t)(slash - rel);
        if (nc > 0 && strlen(names[nc - 1]) == len && strncmp(names[nc - 1], rel, len) == 0)
            continue; /* sorted paths: a class's images are adjacent */
        char **v = realloc(names, sizeof(char *) * (size_t)(nc + 1));
        if (!v)
            break;
        names = v;
        names[nc++] = strndup(rel, len);
    }
    yolo_free_strings(files, n);
    if (nc == 0) {
        free(names);
        return yolo_error(YOLO_ERR_FORMAT, "%s: no class folders with images (expected %s/<class>/*.jpg)", train, train);
    }
    /* keep the yaml's names when they fit the folders (they are in sorted-folder order) */
    c->class_dirs = names;
    if (c->nc != nc) {
        yolo_free_strings(c->names, c->nc);
        c->names = calloc((size_t)nc + 1, sizeof(char *));
        if (!c->names)
            return yolo_error(YOLO_ERR_NOMEM, "names");
        for (int i = 0; i < nc; i++)
            c->names[i] = strdup(names[i]);
        c->nc = nc;
    }
    return YOLO_OK;
}

static yolo_status default_splits(yolo_data_config *c, unsigned needs) {
    static const char *cls_dirs[YOLO_SPLIT_COUNT] = {"train", "val", "test"};
    static const char *det_dirs[YOLO_SPLIT_COUNT] = {"images/train", "images/val", "images/test"};
    const char **dirs = (needs & YOLO_NEED_IMAGE_CLASS) ? cls_dirs : det_dirs;
    for (int s = 0; s < YOLO_SPLIT_COUNT; s++) {
        char *p = yolo_path_join(c->root, dirs[s]);
        if (p && dirs == cls_dirs && s == YOLO_SPLIT_VAL && !yolo_vfs_is_dir(c->vfs, p)) {
            free(p); /* Ultralytics' check_cls_dataset: val/, else validation/ (else test/: finish) */
            p = yolo_path_join(c->root, "validation");
        }
        if (p && yolo_vfs_is_dir(c->vfs, p)) {
            yolo_status st = add_split(c, (yolo_split)s, p);
            if (st != YOLO_OK)
                return st;
        } else {
            free(p);
        }
    }
    return YOLO_OK;
}

/* One entry of a split: a text (a folder, a file list or an image). */
static yolo_status parse_split_entry(yolo_data_config *c, yaml_doc *y, yaml_node_t *n, yolo_split s,
                                     const char *yaml_dir) {
    const char *v;
    yolo_status st = text_of(y, n, yolo_split_name(s), &v);
    return st != YOLO_OK || !v ? st : add_split(c, s, resolve_entry(c, v, yaml_dir));
}

static yolo_status parse_split_node(yolo_data_config *c, yaml_doc *y, yaml_node_t *n, yolo_split s, const char *yaml_dir) {
    if (!n || n->type != YAML_SEQUENCE_NODE)
        return n ? parse_split_entry(c, y, n, s, yaml_dir) : YOLO_OK;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yolo_status st = parse_split_entry(c, y, yaml_document_get_node(&y->doc, *it), s, yaml_dir);
        if (st != YOLO_OK)
            return st;
    }
    return YOLO_OK;
}

static yolo_status apply_yaml(yolo_data_config *c, const char *yaml_path, unsigned needs, bool root_given) {
    yaml_doc y;
    yolo_status st = load_yaml(yaml_path, &y);
    if (st != YOLO_OK)
        return st;
    yaml_node_t *top = yaml_document_get_root_node(&y.doc);
    char *yaml_dir = yolo_path_dirname(yaml_path);
    const char *path = NULL;
    if (!root_given)
        st = text_of(&y, map_get(&y, top, "path"), "path (the dataset's one root folder)", &path);
    if (!root_given && st == YOLO_OK) {
        char *root = resolve_root(path ? path : ".", yaml_dir);
        st = root ? open_root(c, root) : yolo_error(YOLO_ERR_NOMEM, "path");
        const char *download = scalar(map_get(&y, top, "download"));
        if (st == YOLO_ERR_IO && download) { /* Ultralytics would fetch it; say what to fetch */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", yolo_last_error());
            bool script = strchr(download, '\n') != NULL; /* VOC.yaml and others hold a Python script */
            st = yolo_error(st, "%s (this yaml's download: %.200s%s is not run here: there is no network code; "
                            "fetch and unpack the data there yourself)", msg, script ? "script" : download,
                            !script && strlen(download) > 200 ? "..." : "");
        }
        if (st != YOLO_OK)
            st = yolo_error_context(st, "%s:%d: path", yaml_path, line_of(map_get(&y, top, "path")));
        free(root);
    }
    static const char *keys[YOLO_SPLIT_COUNT] = {"train", "val", "test"};
    for (int s = 0; st == YOLO_OK && s < YOLO_SPLIT_COUNT; s++)
        st = parse_split_node(c, &y, map_get(&y, top, keys[s]), (yolo_split)s, yolo_vfs_is_archive(c->vfs) ? NULL : yaml_dir);
    yaml_node_t *names = map_get(&y, top, "names");
    if (st == YOLO_OK && names)
        st = parse_names(&y, names, c);
    yaml_node_t *ncn = map_get(&y, top, "nc");
    if (st == YOLO_OK && ncn) {
        int nc;
        st = parse_int(&y, ncn, "nc", 1, YOLO_DATA_MAX_CLASSES, &nc);
        if (st == YOLO_OK && names && nc != c->nc)
            st = yolo_error(YOLO_ERR_CONFIG, "%s:%d: nc: %d but names has %d entries", yaml_path, line_of(ncn), nc, c->nc);
        if (st == YOLO_OK && !names) {
            c->names = calloc((size_t)nc + 1, sizeof(char *));
            if (!c->names)
                st = yolo_error(YOLO_ERR_NOMEM, "%s: nc: %d class names", yaml_path, nc);
            c->nc = c->names ? nc : 0;
            for (int i = 0; c->names && i < nc; i++) {
                char buf[32];
                snprintf(buf, sizeof buf, "class%d", i);
                c->names[i] = strdup(buf);
            }
        }
    }
    /* Ultralytics' channels (8.3: 1 reads images as grayscale, the model
     * takes 1 channel): images here are RGB throughout, so only 3 is taken */
    yaml_node_t *channels = map_get(&y, top, "channels");
    if (st == YOLO_OK && channels) {
        int ch;
        st = parse_int(&y, channels, "channels", 1, 64, &ch);
        if (st == YOLO_OK && ch != 3)
            st = yolo_error(YOLO_ERR_UNSUPPORTED, "%s:%d: channels: %d is not built: images are read as RGB (3 "
                            "channels); remove the key or set it to 3", yaml_path, line_of(channels), ch);
    }
    yaml_node_t *kpt = map_get(&y, top, "kpt_shape");
    if (st == YOLO_OK && kpt) {
        if (kpt->type != YAML_SEQUENCE_NODE || kpt->data.sequence.items.top - kpt->data.sequence.items.start != 2) {
            st = yolo_error(YOLO_ERR_CONFIG, "%s:%d: kpt_shape: expected [count, dims]", yaml_path, line_of(kpt));
        } else {
            st = parse_int(&y, yaml_document_get_node(&y.doc, kpt->data.sequence.items.start[0]), "kpt_shape", 1, 256, &c->kpt_count);
            if (st == YOLO_OK)
                st = parse_int(&y, yaml_document_get_node(&y.doc, kpt->data.sequence.items.start[1]), "kpt_shape", 2, 3, &c->kpt_dims);
            if (st == YOLO_OK && (c->kpt_count <= 0 || c->kpt_count > 256 || (c->kpt_dims != 2 && c->kpt_dims != 3)))
                st = yolo_error(YOLO_ERR_CONFIG, "%s:%d: kpt_shape: [%d, %d] (dims must be 2 or 3)", yaml_path,
                                line_of(kpt), c->kpt_count, c->kpt_dims);
        }
    }
    yaml_node_t *flip = map_get(&y, top, "flip_idx");
    if (st == YOLO_OK && flip && c->kpt_count > 0) {
        int n = flip->type == YAML_SEQUENCE_NODE ? (int)(flip->data.sequence.items.top - flip->data.sequence.items.start) : -1;
        if (n != c->kpt_count)
            st = yolo_error(YOLO_ERR_CONFIG, "%s:%d: flip_idx: expected %d entries", yaml_path, line_of(flip), c->kpt_count);
        c->flip_idx = st == YOLO_OK && n > 0 ? calloc((size_t)n, sizeof(int)) : NULL;
        for (int i = 0; st == YOLO_OK && c->flip_idx && i < n; i++) {
            st = parse_int(&y, yaml_document_get_node(&y.doc, flip->data.sequence.items.start[i]), "flip_idx", INT_MIN, INT_MAX, &c->flip_idx[i]);
            if (st == YOLO_OK && (c->flip_idx[i] < 0 || c->flip_idx[i] >= n))
                st = yolo_error(YOLO_ERR_CONFIG, "%s:%d: flip_idx: %d out of range", yaml_path, line_of(flip), c->flip_idx[i]);
        }
    }
    (void)needs;
    free(yaml_dir);
    yaml_document_delete(&y.doc);
    return st;
}

/* An archive with a yaml inside (at its root), or one beside it (X.yaml). */
static yolo_status load_archive(yolo_data_config *c, const char *path, unsigned needs) {
    yolo_status st = open_root(c, path);
    if (st != YOLO_OK)
        return st;
    char **files;
    int64_t n;
    st = yolo_vfs_list(c->vfs, c->root, &files, &n);
    if (st != YOLO_OK)
        return st;
    char *inner = NULL;
    size_t rl = strlen(c->root);
    for (int64_t i = 0; i < n && !inner; i++) {
        const char *rel = files[i] + rl + (rl ? 1 : 0);
        if (!strchr(rel, '/') && (yolo_path_has_ext(rel, ".yaml") || yolo_path_has_ext(rel, ".yml")))
            inner = strdup(files[i]);
    }
    yolo_free_strings(files, n);
    char *sibling = NULL;
    if (!inner) {
        const char *exts[] = {".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tgz", ".zip", ".tar"};
        for (size_t e = 0; e < sizeof exts / sizeof exts[0]; e++)
            if (yolo_path_has_ext(path, exts[e])) {
                size_t stem = strlen(path) - strlen(exts[e]);
                sibling = malloc(stem + 6);
                if (sibling)
                    snprintf(sibling, stem + 6, "%.*s.yaml", (int)stem, path);
                break;
            }
        if (sibling && !yolo_is_file(sibling)) {
            free(sibling);
            sibling = NULL;
        }
    }
    if (inner) {
        /* extract the small yaml to a temporary file for the yaml reader */
        uint8_t *text;
        size_t len;
        st = yolo_vfs_read(c->vfs, inner, &text, &len);
        char tmp[] = "/tmp/yolo-data-XXXXXX";
        int fd = st == YOLO_OK ? mkstemp(tmp) : -1;
        if (st == YOLO_OK && fd < 0)
            st = yolo_error(YOLO_ERR_IO, "temporary copy of %s", inner);
        if (fd >= 0) {
            FILE *f = fdopen(fd, "wb");
            if (f) {
                fwrite(text, 1, len, f);
                fclose(f);
            }
            char *msg_name = yolo_path_join(path, inner);
            st = apply_yaml(c, tmp, needs, true);
            if (st != YOLO_OK)
                st = yolo_error_context(st, "in %s", msg_name ? msg_name : inner);
            free(msg_name);
            unlink(tmp);
        }
        if (st == YOLO_OK)
            c->yaml_path = yolo_path_join(path, inner);
        free(text);
        free(inner);
        return st;
    }
    if (sibling) {
        st = apply_yaml(c, sibling, needs, true);
        c->yaml_path = sibling;
        return st;
    }
    return default_splits(c, needs);
}

static yolo_status finish(yolo_data_config *c, unsigned needs) {
    c->image_folder = (needs & YOLO_NEED_IMAGE_CLASS) != 0;
    if (c->image_folder) {
        /* Ultralytics validates on test/ when a classification set has no val/ */
        bool val_ok = c->n_split_paths[YOLO_SPLIT_VAL] > 0 && yolo_vfs_is_dir(c->vfs, c->split_paths[YOLO_SPLIT_VAL][0]);
        if (!val_ok && c->n_split_paths[YOLO_SPLIT_TEST] > 0) {
            yolo_free_strings(c->split_paths[YOLO_SPLIT_VAL], c->n_split_paths[YOLO_SPLIT_VAL]);
            c->split_paths[YOLO_SPLIT_VAL] = NULL;
            c->n_split_paths[YOLO_SPLIT_VAL] = 0;
            yolo_status st = add_split(c, YOLO_SPLIT_VAL, strdup(c->split_paths[YOLO_SPLIT_TEST][0]));
            if (st != YOLO_OK)
                return st;
        }
        yolo_status st = classes_from_folders(c);
        if (st != YOLO_OK)
            return st;
    }
    if (c->n_split_paths[YOLO_SPLIT_TRAIN] == 0 && c->n_split_paths[YOLO_SPLIT_VAL] == 0)
        return yolo_error(YOLO_ERR_CONFIG, "%s: no train or val split found", c->source);
    if (c->nc <= 0)
        return yolo_error(YOLO_ERR_CONFIG, "%s: no class names (give names: or nc:)", c->yaml_path ? c->yaml_path : c->source);
    for (int i = 0; i < c->nc; i++)
        if (!c->names[i])
            return yolo_error(YOLO_ERR_CONFIG, "%s: names: index %d missing", c->yaml_path ? c->yaml_path : c->source, i);
    return YOLO_OK;
}

yolo_status yolo_data_config_load(const char *data, unsigned needs, yolo_data_config *c) {
    memset(c, 0, sizeof *c);
    if (!data || !data[0])
        return yolo_error(YOLO_ERR_CONFIG, "data: empty");
    c->source = strdup(data);
    yolo_status st;
    if (strcmp(data, "shapes") == 0 || strcmp(data, "shapes.yaml") == 0) {
        char *yaml = NULL, *cls = NULL;
        st = yolo_shapes_ensure(&yaml, &cls);
        if (st == YOLO_OK && (needs & YOLO_NEED_IMAGE_CLASS)) {
            st = open_root(c, cls);
            if (st == YOLO_OK)
                st = default_splits(c, needs);
        } else if (st == YOLO_OK) {
            c->yaml_path = strdup(yaml);
            st = apply_yaml(c, yaml, needs, false);
        }
        free(yaml);
        free(cls);
    } else if (yolo_is_dir(data)) {
        st = open_root(c, data);
        if (st == YOLO_OK)
            st = default_splits(c, needs);
    } else if (yolo_path_is_archive(data)) {
        st = load_archive(c, data, needs);
    } else if (yolo_is_file(data) || access(data, F_OK) == 0) { /* a device or FIFO too: read bounded */
        c->yaml_path = strdup(data);
        st = apply_yaml(c, data, needs, false);
    } else {
        /* a bare name: look in the datasets folder (coco8 -> coco8.yaml) */
        char *datasets = yolo_datasets_dir(NULL), *cand = NULL;
        if (datasets) {
            char buf[1024];
            snprintf(buf, sizeof buf, "%s%s", data, yolo_path_has_ext(data, ".yaml") ? "" : ".yaml");
            cand = yolo_path_join(datasets, buf);
        }
        free(datasets);
        if (cand && yolo_is_file(cand)) {
            c->yaml_path = strdup(cand);
            st = apply_yaml(c, cand, needs, false);
        } else {
            st = yolo_error(YOLO_ERR_IO, "data=%s: no such yaml, folder or archive (nor in the datasets folder: "
                            "YOLO_DATASETS_DIR, or datasets_dir in Ultralytics' settings.json)", data);
        }
        free(cand);
    }
    if (st == YOLO_OK)
        st = finish(c, needs);
    if (st != YOLO_OK)
        yolo_data_config_free(c);
    return st;
}
