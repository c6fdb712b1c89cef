/* Backend capabilities (backend/backend.h, yolo_backend_supports):
 *   1. the CPU backend can run collectives mid-graph and is no emulation;
 *   2. a Vulkan device cannot run collectives mid-graph (a graph is one
 *      recorded command buffer) and says it is emulated on the CPU exactly
 *      when it is lavapipe (skipped without a Vulkan device);
 *   3. no code outside core/backend/ tests a backend's name: no line of
 *      core/ or plugins/ calls yolo_backend_name( inside a comparison
 *      (str*cmp, strstr, memcmp); the checker is first shown to catch one. */
#define _XOPEN_SOURCE 700
#include "test_util.h"

#include <ftw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

static void test_cpu(void) {
    yolo_backend *cpu = NULL;
    CHECK_MSG(yolo_backend_create("cpu", 1, &cpu) == YOLO_OK, "%s", yolo_last_error());
    CHECK(yolo_backend_supports(cpu, YOLO_BACKEND_CAP_COLLECTIVE_IN_GRAPH));
    CHECK(!yolo_backend_supports(cpu, YOLO_BACKEND_CAP_EMULATED_ON_CPU));
    CHECK(yolo_backend_supports(cpu, YOLO_BACKEND_CAP_OP_PROFILE)); /* profile=True */
    CHECK(!yolo_backend_supports(NULL, YOLO_BACKEND_CAP_COLLECTIVE_IN_GRAPH));
    yolo_backend_free(cpu);
}

static void test_vulkan(void) {
    yolo_backend *vk = NULL;
    if (yolo_backend_create("vulkan:0", 0, &vk) != YOLO_OK) {
        printf("vulkan part skipped: %s\n", yolo_last_error());
        return;
    }
    bool lavapipe = strstr(yolo_backend_name(vk), "llvmpipe") != NULL;
    printf("%s: emulated on the CPU %s\n", yolo_backend_name(vk),
           yolo_backend_supports(vk, YOLO_BACKEND_CAP_EMULATED_ON_CPU) ? "yes" : "no");
    CHECK(!yolo_backend_supports(vk, YOLO_BACKEND_CAP_COLLECTIVE_IN_GRAPH));
    if (lavapipe) CHECK(yolo_backend_supports(vk, YOLO_BACKEND_CAP_EMULATED_ON_CPU));
    yolo_backend_free(vk);
}

/* ---- no backend-name tests outside core/backend ---- */

static int violations;
static const char *source_dir;

/* 1 if a line calls yolo_backend_name( inside a comparison. */
static int compares_backend_name(const char *line) {
    static const char *const compare[] = {"strcmp(", "strncmp(", "strcasecmp(", "strncasecmp(", "strstr(", "memcmp("};
    if (!strstr(line, "yolo_backend_name(")) return 0;
    for (size_t i = 0; i < sizeof compare / sizeof *compare; i++)
        if (strstr(line, compare[i])) return 1;
    return 0;
}

static int scan_file(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    size_t n = strlen(path);
    if (type != FTW_F || n < 3 || strcmp(path + n - 2, ".c") != 0) return 0;
    char backend_dir[4096];
    snprintf(backend_dir, sizeof backend_dir, "%s/core/backend/", source_dir);
    if (strncmp(path, backend_dir, strlen(backend_dir)) == 0) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[4096];
    for (int no = 1; fgets(line, sizeof line, f); no++) {
        if (compares_backend_name(line)) {
            fprintf(stderr, "%s:%d: tests a backend's name; ask yolo_backend_supports instead: %s", path, no, line);
            violations++;
        }
    }
    fclose(f);
    return 0;
}

static void test_no_name_tests(void) {
    CHECK(compares_backend_name("if (strncmp(yolo_backend_name(b), \"cpu\", 3) != 0)"));
    CHECK(compares_backend_name("bool x = strstr(yolo_backend_name(b), \"llvmpipe\") != NULL;"));
    CHECK(!compares_backend_name("printf(\"on %s\\n\", yolo_backend_name(b));"));
    source_dir = getenv("YOLO_SOURCE_DIR");
    if (!source_dir) {
        printf("YOLO_SOURCE_DIR unset: the source scan is skipped\n");
        return;
    }
    const char *dirs[] = {"core", "plugins"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", source_dir, dirs[i]);
        CHECK_MSG(nftw(path, scan_file, 16, FTW_PHYS) == 0, "cannot walk %s", path);
    }
    CHECK_MSG(violations == 0, "%d backend-name test(s) outside core/backend", violations);
}

int main(void) {
    test_cpu();
    test_vulkan();
    test_no_name_tests();
    return test_result("test_backend_caps");
}
