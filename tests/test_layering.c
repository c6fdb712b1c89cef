/* Layering rules (the core knows no task; tasks are plugins on the SDK):
 *   1. no file under core/ includes a header from plugins/;
 *   2. a plugin includes only sdk/include/yolo/ headers, its own
 *      directory's headers, the model-yaml header cmake/embed.cmake
 *      generates for it ("<task>_model_yamls.h") and system headers
 *      (nothing from core/); the detection toolkit (detection/, libyolo-
 *      detection) is layered on the SDK the same way;
 *   3. no file under core/ compares against a task name: a string literal
 *      that is exactly a task name ("detect", "segment", "classify",
 *      "pose", "obb" or any plugins/<task>) in a statement that compares
 *      (str*cmp, memcmp, strstr, ==, !=) is task-specific code.
 * Rule 2 allows headers anywhere under plugins/ (a plugin may share a
 * sibling's head code); what it forbids is core/ and other repo headers.
 * The checkers are first run on small texts to show they catch each case. */
#define _XOPEN_SOURCE 700
#include "test_util.h"

#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *source_dir;
static int violations;

static bool exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool under(const char *path, const char *dir) {
    char real[PATH_MAX], real_dir[PATH_MAX];
    if (realpath(path, real) == NULL || realpath(dir, real_dir) == NULL) return false;
    size_t n = strlen(real_dir);
    return strncmp(real, real_dir, n) == 0 && real[n] == '/';
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    if (text && fread(text, 1, (size_t)size, f) != (size_t)size) size = 0;
    if (text) text[size] = '\0';
    fclose(f);
    return text;
}

/* ---- scanning C text: includes and string literals outside comments ---- */
typedef void (*include_fn)(const char *file, int line, const char *name, bool angle, void *ctx);
/* `line_text`: the statement holding the literal (NUL-terminated copy). */
typedef void (*literal_fn)(const char *file, int line, const char *literal, const char *line_text, void *ctx);

static void scan_c(const char *file, const char *text, include_fn on_include, literal_fn on_literal, void *ctx) {
    int line = 1;
    bool line_start = true;
    for (const char *p = text; *p;) {
        if (*p == '\n') {
            line++;
            line_start = true;
            p++;
            continue;
        }
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
                if (*p == '\n') line++;
            if (*p) p += 2;
            continue;
        }
        if (line_start && (*p == ' ' || *p == '\t')) {
            p++;
            continue;
        }
        if (line_start && *p == '#') {
            const char *q = p + 1;
            while (*q == ' ' || *q == '\t') q++;
            if (strncmp(q, "include", 7) == 0) {
                q += 7;
                while (*q == ' ' || *q == '\t') q++;
                char close = *q == '"' ? '"' : *q == '<' ? '>' : 0;
                const char *end = close ? strchr(q + 1, close) : NULL;
                if (end != NULL && on_include) {
                    char name[512];
                    snprintf(name, sizeof name, "%.*s", (int)(end - q - 1), q + 1);
                    on_include(file, line, name, close == '>', ctx);
                }
                while (*p && *p != '\n') p++;
                continue;
            }
        }
        line_start = false;
        if (*p == '\'') {
            for (p++; *p && *p != '\'' && *p != '\n'; p++)
                if (*p == '\\' && p[1]) p++;
            if (*p == '\'') p++;
            continue;
        }
        if (*p == '"') {
            /* the statement around it: from the previous ; { } to the next ; { */
            const char *ls = p, *le = p + 1;
            while (ls > text && ls[-1] != ';' && ls[-1] != '{' && ls[-1] != '}') ls--;
            while (*le && *le != ';' && *le != '{') le++;
            char line_text[1024];
            snprintf(line_text, sizeof line_text, "%.*s", (int)(le - ls), ls);
            char literal[256];
            size_t n = 0;
            for (p++; *p && *p != '"' && *p != '\n'; p++) {
                if (*p == '\\' && p[1]) {
                    if (n < sizeof literal - 2) literal[n++] = *p;
                    p++;
                }
                if (n < sizeof literal - 1) literal[n++] = *p;
            }
            literal[n] = '\0';
            if (*p == '"') p++;
            if (on_literal) on_literal(file, line, literal, line_text, ctx);
            continue;
        }
        p++;
    }
}

/* ---- the rules ---- */
static char task_names[64][64];
static int n_task_names;
static char plugin_headers[256][256];
static int n_plugin_headers;

typedef struct check_ctx {
    bool in_core;
    char dir[PATH_MAX]; /* the file's directory */
    int found;          /* violations in this file */
} check_ctx;

static void report(check_ctx *c, const char *file, int line, const char *what) {
    fprintf(stderr, "%s:%d: layering: %s\n", file, line, what);
    c->found++;
}

static void check_include(const char *file, int line, const char *name, bool angle, void *ctx) {
    check_ctx *c = ctx;
    char path[PATH_MAX * 2], what[1024];
    if (c->in_core) {
        if (strstr(name, "plugins/") != NULL) {
            snprintf(what, sizeof what, "core includes <%s> from plugins/", name);
            report(c, file, line, what);
            return;
        }
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
        const char *roots[] = {c->dir, NULL, NULL};
        char core_root[PATH_MAX], sdk_root[PATH_MAX];
        snprintf(core_root, sizeof core_root, "%s/core", source_dir);
        snprintf(sdk_root, sizeof sdk_root, "%s/sdk/include", source_dir);
        roots[1] = core_root;
        roots[2] = sdk_root;
        char plugins[PATH_MAX];
        snprintf(plugins, sizeof plugins, "%s/plugins", source_dir);
        for (int r = 0; r < 3; r++) {
            snprintf(path, sizeof path, "%s/%s", roots[r], name);
            if (exists(path)) {
                if (under(path, plugins)) {
                    snprintf(what, sizeof what, "core includes \"%s\", a header under plugins/", name);
                    report(c, file, line, what);
                }
                return; /* resolves inside core/ or sdk/ */
            }
        }
        for (int i = 0; i < n_plugin_headers; i++) {
            if (strcmp(plugin_headers[i], base) == 0) {
                snprintf(what, sizeof what, "core includes \"%s\", which only exists under plugins/", name);
                report(c, file, line, what);
                return;
            }
        }
        return;
    }
    /* a plugin file */
    snprintf(path, sizeof path, "%s/sdk/include/%s", source_dir, name);
    if (strncmp(name, "yolo/", 5) == 0 && strstr(name, "..") == NULL && exists(path)) return;
    if (!angle && strchr(name, '/') == NULL) {
        snprintf(path, sizeof path, "%s/%s", c->dir, name);
        if (exists(path)) return; /* the plugin's own header */
        const char *generated = "_model_yamls.h";
        size_t n = strlen(name), g = strlen(generated);
        if (n > g && strcmp(name + n - g, generated) == 0) return; /* its embedded yamls (cmake/embed.cmake) */
    }
    char plugins[PATH_MAX];
    snprintf(plugins, sizeof plugins, "%s/plugins", source_dir);
    if (!angle) {
        snprintf(path, sizeof path, "%s/%s", c->dir, name);
        if (exists(path) && under(path, plugins)) return; /* a header or source of the plugins tree */
    }
    if (angle) {
        const char *roots[] = {"core", "", "plugins", "sdk/include", "tests"};
        bool in_repo = false;
        for (int r = 0; r < 5 && !in_repo; r++) {
            snprintf(path, sizeof path, "%s/%s/%s", source_dir, roots[r], name);
            in_repo = exists(path);
        }
        if (!in_repo && strncmp(name, "yolo/", 5) != 0) return; /* a system header */
    }
    snprintf(what, sizeof what, "plugin includes %c%s%c; plugins may include only sdk/include/yolo/*.h, their own "
             "headers and system headers", angle ? '<' : '"', name, angle ? '>' : '"');
    report(c, file, line, what);
}

static void check_literal(const char *file, int line, const char *literal, const char *line_text, void *ctx) {
    check_ctx *c = ctx;
    if (!c->in_core) return;
    const char *compares[] = {"cmp(", "strstr(", "==", "!="};
    bool comparing = false;
    for (int i = 0; i < 4; i++) comparing = comparing || strstr(line_text, compares[i]) != NULL;
    if (!comparing) return;
    for (int i = 0; i < n_task_names; i++) {
        if (strcmp(literal, task_names[i]) == 0) {
            char what[256];
            snprintf(what, sizeof what, "core code uses the task name \"%s\" (task-specific code belongs in its plugin)",
                     literal);
            report(c, file, line, what);
        }
    }
}

static int check_text(const char *file, const char *text, bool in_core, const char *dir) {
    check_ctx c = {.in_core = in_core};
    snprintf(c.dir, sizeof c.dir, "%s", dir);
    scan_c(file, text, check_include, check_literal, &c);
    return c.found;
}

static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    if (type != FTW_F) return 0;
    size_t len = strlen(path);
    if (len < 2 || !(strcmp(path + len - 2, ".c") == 0 || strcmp(path + len - 2, ".h") == 0)) return 0;
    char *text = read_all(path);
    if (text == NULL) return 0;
    char dir_buf[PATH_MAX];
    snprintf(dir_buf, sizeof dir_buf, "%s", path);
    char core[PATH_MAX];
    snprintf(core, sizeof core, "%s/core/", source_dir);
    violations += check_text(path, text, strncmp(path, core, strlen(core)) == 0, dirname(dir_buf));
    free(text);
    return 0;
}

static int collect_plugin_headers(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb;
    size_t len = strlen(path);
    if (type == FTW_D && ftw->level == 1 && n_task_names < 64) snprintf(task_names[n_task_names++], 64, "%s", path + ftw->base);
    if (type == FTW_F && len > 2 && strcmp(path + len - 2, ".h") == 0 && n_plugin_headers < 256)
        snprintf(plugin_headers[n_plugin_headers++], 256, "%s", path + ftw->base);
    return 0;
}

static void self_test(void) {
    char core_dir[PATH_MAX], detect_dir[PATH_MAX], detection_dir[PATH_MAX];
    snprintf(core_dir, sizeof core_dir, "%s/core/cli", source_dir);
    snprintf(detect_dir, sizeof detect_dir, "%s/plugins/detect", source_dir);
    snprintf(detection_dir, sizeof detection_dir, "%s/detection", source_dir);
    fprintf(stderr, "self-test (the next lines are expected):\n");
    CHECK(check_text("fake_core.c", "#include \"../plugins/detect/x.h\"\n", true, core_dir) == 1);
    CHECK(check_text("fake_core.c", "#include <plugins/detect/x.h>\n", true, core_dir) == 1);
    CHECK(check_text("fake_core.c", "if (strcmp(task, \"detect\") == 0) {}\n", true, core_dir) == 1);
    CHECK(check_text("fake_core.c", "if (name == \"segment\") {}\n", true, core_dir) == 1);
    CHECK(check_text("fake_core.c", "ok = !strncmp(t,\n \"pose\", 4) || strcasecmp(t, \"obb\");\n", true, core_dir) == 2);
    CHECK(check_text("fake_plugin.c", "#include \"cli/cli.h\"\n", false, detect_dir) == 1);
    CHECK(check_text("fake_plugin.c", "#include \"../../core/cli/cli.h\"\n", false, detect_dir) == 1);
    CHECK(check_text("fake_plugin.c", "#include <cli/cli.h>\n", false, detect_dir) == 1);
    CHECK(check_text("fake_plugin.c", "#include \"yolo/../../../core/cli/cli.h\"\n", false, detect_dir) == 1);
    CHECK(check_text("fake_toolkit.c", "#include \"util/embedded.h\"\n", false, detection_dir) == 1);
    fprintf(stderr, "self-test: none expected below\n");
    /* allowed */
    CHECK(check_text("fake_core.c", "// strcmp(t, \"detect\")\n/* \"detect\" */\n#include \"cli/cli.h\"\n", true,
                     core_dir) == 0);
    CHECK(check_text("fake_core.c", "puts(\"yolo --task detect train\"); char c = '\"';\n", true, core_dir) == 0);
    CHECK(check_text("fake_core.c", "path = join(dir, \"classify\");\n", true, core_dir) == 0);
    CHECK(check_text("fake_plugin.c", "#include \"yolo/plugin.h\"\n#include <stdio.h>\n#include <math.h>\n", false,
                     detect_dir) == 0);
    CHECK(check_text("fake_plugin.c", "const char *t = \"detect\";\n", false, detect_dir) == 0);
    CHECK(check_text("fake_plugin.c", "#include \"../segment/plugin.c\"\n", false, detect_dir) == 0);
    CHECK(check_text("fake_plugin.c", "#include \"detect_model_yamls.h\"\n", false, detect_dir) == 0);
    CHECK(check_text("fake_toolkit.c", "#include \"yolo/detection.h\"\n", false, detection_dir) == 0);
}

int main(void) {
    source_dir = getenv("YOLO_SOURCE_DIR");
    if (source_dir == NULL) return test_skip("YOLO_SOURCE_DIR is not set (run through ctest)");
    char plugins[PATH_MAX], core[PATH_MAX], detection[PATH_MAX];
    snprintf(plugins, sizeof plugins, "%s/plugins", source_dir);
    snprintf(core, sizeof core, "%s/core", source_dir);
    snprintf(detection, sizeof detection, "%s/detection", source_dir);
    nftw(plugins, collect_plugin_headers, 16, FTW_PHYS);
    const char *extra[] = {"detect", "segment", "classify", "pose", "obb"};
    for (int i = 0; i < 5; i++) {
        bool seen = false;
        for (int j = 0; j < n_task_names; j++) seen = seen || strcmp(task_names[j], extra[i]) == 0;
        if (!seen) snprintf(task_names[n_task_names++], 64, "%s", extra[i]);
    }
    self_test();
    CHECK(nftw(core, visit, 16, FTW_PHYS) == 0);
    CHECK(nftw(plugins, visit, 16, FTW_PHYS) == 0);
    CHECK(nftw(detection, visit, 16, FTW_PHYS) == 0); /* the toolkit: the plugin rule */
    CHECK_MSG(violations == 0, "%d layering violation(s), listed above", violations);
    return test_result("test_layering");
}
