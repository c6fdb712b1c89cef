/* yolo_cli_main: parse, dispatch to help, checks or a mode, map to an exit code. */
#include "cfg/suggest.h"
#include "cli/cli.h"
#include "cli/modes.h"
#include "dist/dist.h"
#include "dist/launch.h"
#include "plugin/plugin_loader.h"
#include "train/stop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reason is the last line a failing run prints: what went to stdout
 * (buffered when redirected) is flushed first, and the usage hint joins
 * the error's line instead of following it. */
static int fail(yolo_status status, int exit_code) {
    fflush(stdout);
    const char *why = yolo_last_error();
    bool hint = exit_code == YOLO_EXIT_USAGE && !strstr(why, "yolo help");
    fprintf(stderr, "yolo: %s: %s%s\n", yolo_status_name(status), why, hint ? " (see 'yolo help')" : "");
    return exit_code;
}

/* Ultralytics' modes and commands that are not built here, and why. */
static const struct {
    const char *word, *why;
} not_built[] = {
    {"track", "object tracking runs on videos and streams, which are not built either"},
    {"benchmark", "it times every export format; the built ones are onnx and safetensors (yolo export)"},
    {"solutions", "Ultralytics Solutions (counting, heatmaps, ...) run on videos and streams"},
    {"hub", "Ultralytics HUB is a network service; this build has no network code"},
    {"login", "Ultralytics HUB is a network service; this build has no network code"},
    {"logout", "Ultralytics HUB is a network service; this build has no network code"},
    {"explorer", "the dataset explorer needs a web UI and embeddings"},
    {"streamlit-predict", "live inference needs a web UI and a camera"},
};

static int no_mode(const yolo_cli_args *args) {
    for (int i = 0; i < args->n_words; i++)
        for (size_t k = 0; k < sizeof not_built / sizeof *not_built; k++)
            if (strcmp(args->words[i], not_built[k].word) == 0)
                return fail(yolo_error(YOLO_ERR_CONFIG, "'%s' is Ultralytics' but not built here: %s (built modes: "
                                       "%s)", args->words[i], not_built[k].why, yolo_cli_mode_names()),
                            YOLO_EXIT_USAGE);
    /* the word that should have been the mode: the first that is no task ('yolo detect foo' names foo) */
    char tasks[2048];
    yolo_plugin_list_task_names(tasks, sizeof tasks);
    const char *word = NULL;
    for (int i = 0; i < args->n_words && !word; i++)
        if (!yolo_cli_in_list(tasks, args->words[i])) word = args->words[i];
    if (!word)
        return fail(yolo_error(YOLO_ERR_CONFIG, "no mode given; give one of %s", yolo_cli_mode_names()),
                    YOLO_EXIT_USAGE);
    const char *modes[16];
    for (int i = 0; i < yolo_cli_mode_count; i++) modes[i] = yolo_cli_modes[i].name;
    const char *near = yolo_suggest(word, modes, yolo_cli_mode_count);
    return fail(yolo_error(YOLO_ERR_CONFIG, "'%s' is not a mode%s%s%s (modes: %s)", word, near ? "; did you mean '" : "",
                           near ? near : "", near ? "'?" : "", yolo_cli_mode_names()),
                YOLO_EXIT_USAGE);
}

static int run_mode(const yolo_cli_args *args, int argc, char **argv) {
    yolo_config *cfg;
    const yolo_task *task;
    int exit_code;
    yolo_status st = yolo_cli_build_config(args, &cfg, &task, &exit_code);
    if (st != YOLO_OK) return fail(st, exit_code);
    yolo_mode_fn fn = yolo_cli_mode_function(args->mode);
    if (fn == NULL) { /* the parser accepts only the modes of yolo_cli_modes */
        yolo_config_free(cfg);
        return fail(yolo_error(YOLO_ERR_ARG, "mode '%s' has no function (core/cli/modes.c)", args->mode),
                    YOLO_EXIT_FAILURE);
    }
    if (strcmp(args->mode, "train") == 0) { /* world=N or device=vulkan:0,1 outside a launcher: re-launch */
        int world = 1;
        yolo_mode_context probe = {.mode = args->mode, .config = cfg, .task = task, .argc = argc, .argv = argv};
        st = yolo_train_launch_world(&probe, &world);
        if (!st && world > 1 && yolo_dist_env_detect().world == 1) {
            char why[2048];
            exit_code = yolo_dist_relaunch(argc, argv, world, why, sizeof why);
            if (exit_code < 0) exit_code = fail(YOLO_ERR_DIST, YOLO_EXIT_FAILURE);
            else if (exit_code > 0) fprintf(stderr, "yolo: %s\n", why); /* after the ranks' output */
            yolo_config_free(cfg);
            return exit_code;
        }
        if (st) {
            yolo_config_free(cfg);
            return fail(st, yolo_cli_exit_code(st));
        }
    }
    yolo_mode_context ctx = {.mode = args->mode, .config = cfg, .task = task, .argc = argc, .argv = argv};
    st = fn(&ctx);
    /* stopped by SIGINT/SIGTERM (last.ckpt written): the shell's 128 + signal, 130 / 143 */
    exit_code = st == YOLO_ERR_INTERRUPTED && yolo_stop_signal() > 0 ? 128 + yolo_stop_signal()
                                                                     : yolo_cli_exit_code(st);
    int code = st == YOLO_OK ? YOLO_EXIT_OK : fail(st, exit_code);
    yolo_config_free(cfg);
    fflush(stdout);
    if (strcmp(args->mode, "train") == 0 && code) {
        char why[2048];
        snprintf(why, sizeof why, "%s: %s", yolo_status_name(st), yolo_last_error());
        yolo_dist_record_exit(yolo_dist_env_detect().rank, code, why);
    }
    yolo_dist_end_job_if_broken(code); /* a dead or stalled rank: end the MPI job now */
    return code;
}

int yolo_cli_main(int argc, char **argv) {
    yolo_cli_args *args = calloc(1, sizeof *args);
    if (args == NULL) {
        fprintf(stderr, "yolo: out of memory\n");
        return YOLO_EXIT_FAILURE;
    }
    int code;
    yolo_status st = yolo_cli_parse(argc, argv, args);
    if (st != YOLO_OK) {
        code = fail(st, YOLO_EXIT_USAGE);
    } else if (args->version) {
        printf("yolo %s (plugin ABI %d.%d)\n", YOLO_VERSION, YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR);
        code = YOLO_EXIT_OK;
    } else if (args->help) {
        code = yolo_cli_help(args, stdout);
    } else if (args->mode == NULL && args->n_words > 0 && yolo_cli_is_command(args->words[0])) {
        code = yolo_cli_command(args, stdout);
    } else if (args->mode == NULL) {
        if (argc <= 1) yolo_cli_usage(stderr);
        code = no_mode(args);
    } else if (strcmp(args->mode, "checks") == 0) {
        if (args->n_pairs > 0 || args->n_words > 0 || args->task != NULL)
            code = fail(yolo_error(YOLO_ERR_CONFIG, "'yolo checks' takes no arguments"), YOLO_EXIT_USAGE);
        else
            code = yolo_cli_checks(stdout);
    } else {
        code = run_mode(args, argc, argv);
    }
    free(args);
    fflush(stdout);
    return code;
}
