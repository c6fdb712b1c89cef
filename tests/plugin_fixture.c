/* Fixture task plugins for tests/test_plugin.c and tests/test_cli.c, built
 * by tests/plugins.cmake once per FIXTURE_* variant into
 * <build>/tests/plugin-fixtures/libyolo-<name>.so. */
#include "yolo/model.h"
#include "yolo/plugin.h"

#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

#if defined(FIXTURE_GOOD)
/* A working plugin with its own keys and a head module. */
static const yolo_module_type fixture_head = {.name = "FixtureHead", .summary = "a head that is never built"};
static const yolo_module_type *const fixture_modules[] = {&fixture_head};
static const yolo_config_key fixture_keys[] = {
    {"fixture_gain", YOLO_CONFIG_FLOAT, YOLO_CONFIG_TRAIN | YOLO_CONFIG_MIN | YOLO_CONFIG_MAX, 0, 10, NULL, "2.5",
     "a fixture loss gain"},
    {"fixture_flag", YOLO_CONFIG_BOOL, YOLO_CONFIG_ALL_MODES, 0, 0, NULL, "false", "a fixture switch"},
    {"fixture_style", YOLO_CONFIG_STRING, YOLO_CONFIG_TRAIN, 0, 0, "plain|fancy", "plain", "a fixture choice"},
};
static const char *const fixture_keys_read[] = {"box"}; /* of the core keys for some tasks only */
static const yolo_task task = {
    .abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR},
    .name = "fixture",
    .version = "9.8.7",
    .description = "a test fixture",
    .default_model = "fixture-model.yaml",
    .default_data = "fixture-data.yaml",
    .modules = fixture_modules,
    .n_modules = 1,
    .config_keys = fixture_keys,
    .n_config_keys = 3,
    .task_keys_read = fixture_keys_read,
    .n_task_keys_read = 1,
};
EXPORT const yolo_task *yolo_task_register(void) { return &task; }

#elif defined(FIXTURE_BAD_ABI)
/* Built for another ABI major. */
static const yolo_task task = {.abi = {YOLO_PLUGIN_ABI_MAJOR + 99, 0}, .name = "badabi", .version = "1"};
EXPORT const yolo_task *yolo_task_register(void) { return &task; }

#elif defined(FIXTURE_NEW_MINOR)
/* Built for a newer minor than the loader knows. */
static const yolo_task task = {.abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR + 98}, .name = "newminor"};
EXPORT const yolo_task *yolo_task_register(void) { return &task; }

#elif defined(FIXTURE_NO_SYMBOL)
/* A shared object without the entry symbol. */
EXPORT int yolo_task_register_misspelt(void) { return 1; }

#elif defined(FIXTURE_MISNAMED)
/* libyolo-misnamed.so registering another task name. */
static const yolo_task task = {.abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR}, .name = "othername"};
EXPORT const yolo_task *yolo_task_register(void) { return &task; }

#elif defined(FIXTURE_BAD_KEYS)
/* Redefines a core key. */
static const yolo_config_key keys[] = {
    {"epochs", YOLO_CONFIG_INT, YOLO_CONFIG_TRAIN, 0, 0, NULL, "3", "a clash with the core"},
};
static const yolo_task task = {
    .abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR}, .name = "badkeys", .config_keys = keys, .n_config_keys = 1};
EXPORT const yolo_task *yolo_task_register(void) { return &task; }

#elif defined(FIXTURE_OLD_MINOR)
/* A minor-1 table: its table ends before task_keys_read, so whatever lies
 * there (garbage here) is never read. */
static const yolo_task task = {.abi = {YOLO_PLUGIN_ABI_MAJOR, 1}, .name = "oldminor", .version = "1",
                               .task_keys_read = (const char *const *)8, .n_task_keys_read = -3};
EXPORT const yolo_task *yolo_task_register(void) { return &task; }

#elif defined(FIXTURE_BAD_KEYS_READ)
/* Says it reads two task keys and gives no list. */
static const yolo_task task = {.abi = {YOLO_PLUGIN_ABI_MAJOR, 2}, .name = "badread", .n_task_keys_read = 2};
EXPORT const yolo_task *yolo_task_register(void) { return &task; }

#elif defined(FIXTURE_NULL_TABLE)
/* The entry returns no table. */
EXPORT const yolo_task *yolo_task_register(void) { return NULL; }

#else
#error "define one FIXTURE_* variant"
#endif
