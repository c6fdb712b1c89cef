/* The plugin loader: search path, every loading error (each naming the
 * file), the ABI rule, the registry of tasks and head modules, and the
 * real detect/classify/segment plugins. Fixtures: tests/plugins.cmake. */
#include "plugin/plugin_loader.h"
#include "test_util.h"
#include "yolo/model.h"
#include "yolo/plugin.h"

#include <stdlib.h>
#include <string.h>

static char fixture_dir[1024];
static char real_dir[1024];

static void expect_fail(int line, const char *task, const char *const *needles) {
    const yolo_task *t = (const yolo_task *)1;
    yolo_status st = yolo_plugin_load_task(task, &t);
    if (st != YOLO_ERR_PLUGIN || t != NULL) {
        fprintf(stderr, "test_plugin.c:%d: loading '%s' gave %s (%s)\n", line, task, yolo_status_name(st), yolo_last_error());
        test_failures++;
        return;
    }
    for (int i = 0; needles[i]; i++) {
        if (!test_error_mentions(needles[i])) {
            fprintf(stderr, "test_plugin.c:%d: message for '%s' lacks '%s': %s\n", line, task, needles[i],
                    yolo_last_error());
            test_failures++;
        }
    }
}
#define EXPECT_FAIL(task, ...) expect_fail(__LINE__, task, (const char *const[]){__VA_ARGS__, NULL})

static void test_search_path(void) {
    yolo_plugin_dirs dirs;
    yolo_plugin_search_dirs(&dirs);
    CHECK(dirs.n >= 2);
    CHECK(strcmp(dirs.origin[0], "next to the executable") == 0);
    CHECK(strcmp(dirs.origin[1], "install prefix") == 0);
    int env_index = -1;
    for (int i = 0; i < dirs.n; i++)
        if (strcmp(dirs.dir[i], fixture_dir) == 0) env_index = i;
    CHECK_MSG(env_index >= 2 && strcmp(dirs.origin[env_index], "YOLO_PLUGIN_PATH") == 0, "fixture dir at %d", env_index);
    char task[64];
    CHECK(yolo_plugin_task_from_file("libyolo-detect.so", task, sizeof task) && strcmp(task, "detect") == 0);
    CHECK(!yolo_plugin_task_from_file("libyolo-.so", task, sizeof task));
    CHECK(!yolo_plugin_task_from_file("libyolo.so", task, sizeof task));
    CHECK(!yolo_plugin_task_from_file("libyolo-detect.so.1", task, sizeof task));
}

static void test_errors(void) {
    char abi[64];
    snprintf(abi, sizeof abi, "ABI %d.0", YOLO_PLUGIN_ABI_MAJOR + 99);
    char ours[64];
    snprintf(ours, sizeof ours, "%d.%d", YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR);
    EXPECT_FAIL("badabi", "libyolo-badabi.so", abi, ours, "rebuild");
    snprintf(abi, sizeof abi, "ABI %d.%d", YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR + 98);
    EXPECT_FAIL("newminor", "libyolo-newminor.so", abi, ours);
    EXPECT_FAIL("nosymbol", "libyolo-nosymbol.so", "not a yolo plugin", YOLO_PLUGIN_ENTRY);
    EXPECT_FAIL("garbage", "libyolo-garbage.so", "not a yolo plugin", "cannot be loaded");
    EXPECT_FAIL("misnamed", "libyolo-misnamed.so", "'othername'", "'misnamed'");
    EXPECT_FAIL("badkeys", "libyolo-badkeys.so", "'epochs'", "already defined");
    EXPECT_FAIL("nulltable", "libyolo-nulltable.so", YOLO_PLUGIN_ENTRY, "no task table");
    EXPECT_FAIL("badread", "libyolo-badread.so", "lists 2 task keys read but no table");
    /* a missing task lists the directories searched and the tasks found */
    EXPECT_FAIL("nosuchtask", "task 'nosuchtask' not found", "libyolo-nosuchtask.so", fixture_dir, "YOLO_PLUGIN_PATH",
                "next to the executable", "tasks found", "detect", "fixture");
    EXPECT_FAIL("fixtrue", "did you mean 'fixture'");
    EXPECT_FAIL("../detect", "not found");
    /* a failure is not cached as success */
    EXPECT_FAIL("badabi", "libyolo-badabi.so");
    /* loading a file directly checks it is named for the task */
    char path[1200];
    snprintf(path, sizeof path, "%s/libyolo-badabi.so", fixture_dir);
    const yolo_task *t;
    CHECK(yolo_plugin_load_file(path, NULL, &t) == YOLO_ERR_PLUGIN && test_error_mentions(path));
    CHECK(yolo_plugin_load_file("/nonexistent/libyolo-x.so", NULL, &t) == YOLO_ERR_PLUGIN &&
          test_error_mentions("/nonexistent/libyolo-x.so"));
}

static void test_fixture(void) {
    const yolo_task *t = NULL;
    CHECK_MSG(yolo_plugin_load_task("fixture", &t) == YOLO_OK, "%s", yolo_last_error());
    if (t == NULL) return;
    CHECK(strcmp(t->name, "fixture") == 0 && strcmp(t->version, "9.8.7") == 0);
    CHECK(t->n_config_keys == 3 && strcmp(t->config_keys[0].name, "fixture_gain") == 0);
    const yolo_task *again;
    CHECK(yolo_plugin_load_task("fixture", &again) == YOLO_OK && again == t);
    CHECK(yolo_plugin_find_task("fixture") == t);
    const char *file = yolo_plugin_task_file(t);
    CHECK(file != NULL && strstr(file, "plugin-fixtures/libyolo-fixture.so") != NULL);
    const yolo_task *owner = NULL;
    const yolo_module_type *head = yolo_plugin_find_module("FixtureHead", &owner);
    CHECK(head != NULL && owner == t && strcmp(head->name, "FixtureHead") == 0);
    CHECK(yolo_plugin_find_module("NoSuchHead", NULL) == NULL);
    int n_read = 0;
    const char *const *read = yolo_plugin_task_keys_read(t, &n_read);
    CHECK(read != NULL && n_read == 1 && strcmp(read[0], "box") == 0);
    /* a minor-1 table's would-be task_keys_read is never read */
    const yolo_task *old = NULL;
    CHECK_MSG(yolo_plugin_load_task("oldminor", &old) == YOLO_OK, "%s", yolo_last_error());
    CHECK(old != NULL && yolo_plugin_task_keys_read(old, &n_read) == NULL && n_read == 0);
    /* the same file by path is the same registered task */
    CHECK(yolo_plugin_load_file(file, "fixture", &again) == YOLO_OK && again == t);
}

static void test_real_plugins(void) {
    const char *names[] = {"detect", "classify", "segment"};
    for (int i = 0; i < 3; i++) {
        const yolo_task *t = NULL;
        CHECK_MSG(yolo_plugin_load_task(names[i], &t) == YOLO_OK, "%s", yolo_last_error());
        if (t == NULL) continue;
        CHECK(strcmp(t->name, names[i]) == 0);
        CHECK(t->abi.major == YOLO_PLUGIN_ABI_MAJOR && t->abi.minor <= YOLO_PLUGIN_ABI_MINOR);
        CHECK(t->version != NULL && t->description != NULL && t->default_model != NULL && t->default_data != NULL);
        const char *file = yolo_plugin_task_file(t);
        CHECK_MSG(file != NULL && strncmp(file, real_dir, strlen(real_dir)) == 0, "%s loaded from %s", names[i], file);
    }
}

static void test_scan(void) {
    yolo_plugin_found *found;
    int n;
    CHECK(yolo_plugin_scan(&found, &n) == YOLO_OK);
    int ok = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        if (found[i].table) ok++;
        else if (found[i].shadowed_by < 0) {
            failed++;
            CHECK_MSG(strstr(found[i].error, found[i].path) != NULL, "error for %s does not name it: %s", found[i].path,
                      found[i].error);
        }
    }
    CHECK_MSG(ok >= 5 && failed == 8, "ok %d failed %d", ok, failed); /* 3 real, fixture, oldminor; 8 bad fixtures */
    free(found);
}

int main(void) {
    const char *bin = getenv("YOLO_BINARY_DIR");
    if (bin == NULL) return test_skip("YOLO_BINARY_DIR is not set (run through ctest)");
    snprintf(fixture_dir, sizeof fixture_dir, "%s/tests/plugin-fixtures", bin);
    snprintf(real_dir, sizeof real_dir, "%s/lib/yolo/plugins", bin);
    char *canonical = realpath(fixture_dir, NULL);
    if (canonical == NULL) return test_skip("the fixture plugins are not built (tests/plugins.cmake)");
    snprintf(fixture_dir, sizeof fixture_dir, "%s", canonical);
    free(canonical);
    canonical = realpath(real_dir, NULL);
    if (canonical) {
        snprintf(real_dir, sizeof real_dir, "%s", canonical);
        free(canonical);
    }
    /* the real plugins come from next to the executable; the fixtures from the path */
    setenv("YOLO_PLUGIN_PATH", fixture_dir, 1);
    test_search_path();
    test_errors();
    test_fixture();
    test_real_plugins();
    test_scan();
    return test_result("test_plugin");
}
