/* The command line: the built `yolo` binary's exit codes and messages
 * (0 ok, 2 usage/config error, 1 runtime failure), and, in process, how
 * arguments become the merged configuration a mode function gets. */
#include "cli/cli.h"
#include "plugin/plugin_loader.h"
#include "settings/settings.h"
#include "test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char yolo_binary[1024];
static char real_dir[1024];
static char fixture_dir[1024];
static char out_text[1 << 16], err_text[1 << 16];

static void read_file(const char *path, char *buf, size_t size) {
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (f == NULL) return;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs yolo with the arguments (NULL-terminated) and YOLO_PLUGIN_PATH set to
 * plugin_path; returns its exit code, output in out_text / err_text. */
static int run(const char *plugin_path, ...) {
    const char *argv[64] = {yolo_binary};
    int argc = 1;
    va_list ap;
    va_start(ap, plugin_path);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 63;) argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    setenv("YOLO_PLUGIN_PATH", plugin_path, 1);
    char out_path[] = "/tmp/yolo_test_cli_out_XXXXXX", err_path[] = "/tmp/yolo_test_cli_err_XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    pid_t pid;
    int status = -1, code = -1;
    if (posix_spawn(&pid, yolo_binary, &actions, NULL, (char *const *)argv, environ) == 0 &&
        waitpid(pid, &status, 0) == pid)
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    posix_spawn_file_actions_destroy(&actions);
    close(out_fd);
    close(err_fd);
    read_file(out_path, out_text, sizeof out_text);
    read_file(err_path, err_text, sizeof err_text);
    unlink(out_path);
    unlink(err_path);
    return code;
}

static void expect(int line, int code, int want, const char *where, const char *const *needles) {
    const char *text = strcmp(where, "out") == 0 ? out_text : err_text;
    if (code != want) {
        fprintf(stderr, "test_cli.c:%d: exit %d, expected %d\nstdout: %s\nstderr: %s\n", line, code, want, out_text,
                err_text);
        test_failures++;
    }
    for (int i = 0; needles[i]; i++) {
        if (strstr(text, needles[i]) == NULL) {
            fprintf(stderr, "test_cli.c:%d: std%s lacks '%s':\n%s\n", line, where, needles[i], text);
            test_failures++;
        }
    }
}
#define EXPECT(code, want, where, ...) expect(__LINE__, (code), (want), (where), (const char *const[]){__VA_ARGS__, NULL})

static void test_binary(void) {
    EXPECT(run(real_dir, NULL), 2, "err", "usage: yolo");
    EXPECT(run(real_dir, "version", NULL), 0, "out", "yolo ", "plugin ABI");
    EXPECT(run(real_dir, "help", NULL), 0, "out", "usage: yolo", "epochs=100", "lr0=0.01", "dist_timeout", "sync_bn",
           "float in [0, 1]", "tasks found: classify, detect, segment");
    EXPECT(run(real_dir, "--help", NULL), 0, "out", "usage: yolo");
    EXPECT(run(real_dir, "train", "help", NULL), 0, "out", "keys for train", "lr0=0.01", "mosaic=1.0");
    /* the help says which keys are refused and which have no effect yet */
    EXPECT(run(real_dir, "train", "help", NULL), 0, "out", "deterministic=true", "not supported, only the default");
    EXPECT(run(real_dir, "train", "help", NULL), 0, "out", "multi_scale=false", "rect=false", "rectangular batches");
    EXPECT(run(real_dir, "val", "help", NULL), 0, "out", "save_txt=false", "labels/<stem>.txt");
    EXPECT(run(real_dir, "predict", "help", NULL), 0, "out", "keys for predict", "source=null", "conf=null");
    CHECK(strstr(out_text, "lr0=") == NULL); /* a train-only key */
    EXPECT(run(real_dir, "help", "epochs", NULL), 0, "out", "epochs", "int >= 1", "default: 100");
    EXPECT(run(real_dir, "help", "detect", NULL), 0, "out", "task detect", "libyolo-detect.so");
    EXPECT(run(real_dir, "help", "epoch", NULL), 2, "err", "'epoch'", "did you mean 'epochs'");
    EXPECT(run(real_dir, "checks", NULL), 0, "out", "yolo ", "CPU backend", "oneDNN", "OpenBLAS", "Vulkan", "MPI",
           "images: JPEG (libjpeg-turbo", "WebP (libwebp", "TIFF (libtiff",
           "detect", "classify", "segment", "ABI 1.", "libyolo-detect.so");
    EXPECT(run(real_dir, "checks", "verbose=true", NULL), 2, "err", "takes no arguments");
    /* Ultralytics 8.4's keys in help; a model yaml's end2end that is not a
     * bool is refused naming the yaml's line */
    EXPECT(run(real_dir, "train", "help", NULL), 0, "out", "multi_scale=false", "bool|float in [0, 1]",
           "amp=true", "bool|fp16|bf16|fp32", "compile=false", "cls_pw=0.0", "MuSGD");
    EXPECT(run(real_dir, "val", "help", NULL), 0, "out", "end2end=null", "YOLO26's NMS-free one-to-one head");
    char e2e_path[] = "/tmp/yolo_test_cli_e2e_XXXXXX.yaml", e2e_arg[80];
    int e2e_fd = mkstemps(e2e_path, 5);
    const char *e2e_yaml = "nc: 3\nend2end: yes please\nbackbone: [[-1, 1, Conv, [16, 3, 2]]]\nhead: [[[-1], 1, Detect, [nc]]]\n";
    CHECK(e2e_fd >= 0 && write(e2e_fd, e2e_yaml, strlen(e2e_yaml)) == (ssize_t)strlen(e2e_yaml));
    close(e2e_fd);
    snprintf(e2e_arg, sizeof e2e_arg, "model=%s", e2e_path);
    EXPECT(run(real_dir, "detect", "train", e2e_arg, "data=shapes", "epochs=1", NULL), 2, "err", "end2end", e2e_path, ":2",
           "yes please");
    unlink(e2e_path);
    /* end2end=True on a model without YOLO26's one-to-one head changes nothing, as in Ultralytics, and says so */
    EXPECT(run(real_dir, "detect", "val", "model=yolov8n.yaml", "data=shapes", "imgsz=64", "end2end=True", "plots=False",
               NULL), 0, "out", "end2end=True", "has no one-to-one (end2end) head", "NMS head");
    /* Ultralytics' settings, cfg and copy-cfg: shown, never written (settings.json is its tools') */
    EXPECT(run(real_dir, "settings", NULL), 0, "out", "datasets_dir: ", "settings.json: ", "cache_dir: ");
    EXPECT(run(real_dir, "settings", "datasets_dir=/x", NULL), 2, "err", "never written", "YOLO_DATASETS_DIR");
    EXPECT(run(real_dir, "cfg", NULL), 0, "out", "task: detect", "mode: train", "epochs: 100");
    EXPECT(run(real_dir, "cfg", "epochs=3", NULL), 2, "err", "'yolo cfg' takes no arguments");
    char cwd[1024], tmp_cfg[] = "/tmp/yolo_test_cli_cfg_XXXXXX";
    if (getcwd(cwd, sizeof cwd) && mkdtemp(tmp_cfg) && chdir(tmp_cfg) == 0) {
        EXPECT(run(real_dir, "copy-cfg", NULL), 0, "out", "default_copy.yaml", "yolo cfg=");
        char copied[1 << 15];
        read_file("default_copy.yaml", copied, sizeof copied);
        CHECK(strstr(copied, "epochs: 100") != NULL);
        unlink("default_copy.yaml");
        CHECK(chdir(cwd) == 0);
        rmdir(tmp_cfg);
    }
    /* configuration errors: 2, naming key and value, suggesting the near key */
    EXPECT(run(real_dir, "detect", "train", "epoch=3", NULL), 2, "err", "'epoch'", "epoch=3", "did you mean 'epochs'");
    EXPECT(run(real_dir, "--task", "detect", "train", "epochs=1.5", NULL), 2, "err", "'epochs=1.5'", "integer");
    EXPECT(run(real_dir, "--task=detect", "val", "iou=2", NULL), 2, "err", "'iou=2'", "out of range");
    EXPECT(run(real_dir, "detect", "train", "optimizer=sgdd", NULL), 2, "err", "'optimizer=sgdd'", "SGD");
    EXPECT(run(real_dir, "detect", "train", "epochs", NULL), 2, "err", "'epochs' needs a value");
    EXPECT(run(real_dir, "detect", "train", "epochs=", NULL), 2, "err", "has no value");
    EXPECT(run(real_dir, "detect", "train", "cfg=/nonexistent/my.yaml", NULL), 2, "err", "/nonexistent/my.yaml");
    /* a bare Ultralytics weights name, which Ultralytics downloads: a local file is needed, said so */
    EXPECT(run(real_dir, "info", "model=yolov8n.pt", NULL), 1, "err", "yolov8n.pt", "No such file",
           "Ultralytics downloads its released weights by name");
    EXPECT(run(real_dir, "detect", "train", "model=yolo11n.pt", NULL), 1, "err", "yolo11n.pt",
           "Ultralytics downloads its released weights by name");
    EXPECT(run(real_dir, "info", "model=/nonexistent/yolov8n.pt", NULL), 1, "err", "/nonexistent/yolov8n.pt");
    CHECK(strstr(err_text, "Ultralytics downloads") == NULL); /* a path: just the file's absence */
    /* imgsz: an integer or [h, w], each a multiple of 32 */
    EXPECT(run(real_dir, "detect", "predict", "model=yolov8n.yaml", "source=nowhere", "imgsz=96,160,32", NULL), 2, "err",
           "imgsz: an integer or [h, w]");
    EXPECT(run(real_dir, "detect", "predict", "model=yolov8n.yaml", "source=nowhere", "imgsz=[96,100]", NULL), 2, "err",
           "imgsz=100: must be a positive multiple of 32");
    /* Ultralytics' tasks that are not built: said so, with where a plugin would come from */
    EXPECT(run(real_dir, "pose", "train", "data=coco8-pose.yaml", NULL), 2, "err", "task 'pose' is not built",
           "tasks found: ", "sdk/README.md");
    /* an exported model (Ultralytics runs them): refused naming the file and what to give, by every mode */
    EXPECT(run(real_dir, "detect", "predict", "model=best.onnx", "source=nowhere", NULL), 2, "err", "model=best.onnx",
           "running an exported model is not built", "give the .pt or .ckpt");
    EXPECT(run(real_dir, "info", "model=best_openvino_model/", NULL), 2, "err", "model=best_openvino_model/",
           "running an exported model is not built");
    EXPECT(run(real_dir, "detect", "val", "model=best.engine", NULL), 2, "err", "model=best.engine");
    /* devices: Ultralytics' GPU index N is Vulkan device N; CUDA and MPS are refused naming what to use, as the
     * value is parsed (a configuration error) */
    EXPECT(run(real_dir, "detect", "predict", "model=yolov8n.yaml", "source=nowhere", "device=cuda:0", NULL), 2, "err",
           "device=cuda:0", "CUDA and MPS are not built", "device=0 (vulkan:0)");
    EXPECT(run(real_dir, "detect", "predict", "model=yolov8n.yaml", "source=nowhere", "device=gpu", NULL), 2, "err",
           "device=gpu: unknown device");
    int code = run(real_dir, "detect", "predict", "model=yolov8n.yaml", "source=nowhere", "device=0", NULL);
    CHECK_MSG(code != 0 && (strstr(err_text, "source=nowhere") || strstr(err_text, "vulkan unavailable")),
              "device=0: exit %d, %s", code, err_text); /* vulkan:0 opened (the source is what fails), or none is here */
    /* usage errors */
    EXPECT(run(real_dir, "trian", NULL), 2, "err", "did you mean 'train'");
    EXPECT(run(real_dir, "detct", "train", NULL), 2, "err", "'detct'", "did you mean 'detect'");
    EXPECT(run(real_dir, "detect", "segment", "train", NULL), 2, "err", "two tasks");
    EXPECT(run(real_dir, "--task", "detect", "--task", "segment", "train", NULL), 2, "err", "two tasks");
    EXPECT(run(real_dir, "train", "val", NULL), 2, "err", "two modes");
    EXPECT(run(real_dir, "-x", "train", NULL), 2, "err", "'-x'");
    EXPECT(run(real_dir, "--task", NULL), 2, "err", "--task needs a task name");
    EXPECT(run(real_dir, "--task", "nosuch", "train", NULL), 2, "err", "task 'nosuch' not found", "libyolo-nosuch.so",
           "tasks found: classify, detect, segment");
    /* every mode the help lists has its function */
    const char *modes[] = {"train", "val", "predict", "info"};
    for (int i = 0; i < 4; i++) CHECK_MSG(yolo_cli_mode_function(modes[i]) != NULL, "mode '%s'", modes[i]);
    /* plugins from YOLO_PLUGIN_PATH: their keys validate and show in help; a broken one is a runtime failure */
    EXPECT(run(fixture_dir, "help", NULL), 0, "out", "keys of task 'fixture'", "fixture_gain=2.5", "float in [0, 10]",
           "failed to load");
    EXPECT(run(fixture_dir, "train", "help", NULL), 0, "out", "fixture_gain=2.5");
    EXPECT(run(fixture_dir, "--task", "fixture", "train", "fixture_gain=20", NULL), 2, "err", "'fixture_gain=20'",
           "out of range");
    EXPECT(run(fixture_dir, "fixture", "train", "fixture_gian=2", NULL), 2, "err", "did you mean 'fixture_gain'");
    EXPECT(run(fixture_dir, "--task", "badabi", "train", NULL), 1, "err", "libyolo-badabi.so", "ABI");
    EXPECT(run(fixture_dir, "--task", "nosymbol", "train", NULL), 1, "err", "libyolo-nosymbol.so", "yolo_task_register");
    EXPECT(run(fixture_dir, "--task", "garbage", "train", NULL), 1, "err", "libyolo-garbage.so", "not a yolo plugin");
    EXPECT(run(fixture_dir, "checks", NULL), 1, "out", "fixture    9.8.7", "FAILED", "libyolo-badabi.so",
           "libyolo-garbage.so", "libyolo-nosymbol.so");
}

/* In process: argv -> the configuration a mode function receives. */
static yolo_config *build(int *exit_code, const char *const *argv) {
    int argc = 0;
    while (argv[argc]) argc++;
    yolo_cli_args *args = calloc(1, sizeof *args);
    yolo_config *cfg = NULL;
    const yolo_task *task;
    *exit_code = -1;
    if (yolo_cli_parse(argc, (char **)argv, args) != YOLO_OK) *exit_code = YOLO_EXIT_USAGE;
    else if (yolo_cli_build_config(args, &cfg, &task, exit_code) == YOLO_OK)
        CHECK_MSG(strcmp(task->name, argv[0]) == 0, "task %s, expected %s (%s)", task->name, argv[0], argv[2]);
    free(args);
    return cfg;
}
#define BUILD(code, ...) build(code, (const char *const[]){__VA_ARGS__, NULL})

static const char *str(const yolo_config *cfg, const char *key) {
    const char *v = "unset";
    CHECK_MSG(yolo_config_get_string(cfg, key, &v) == YOLO_OK, "%s", yolo_last_error());
    return v ? v : "(null)";
}

static void test_in_process(void) {
    int code;
    /* argv[0] is the expected task name (the program name is ignored) */
    yolo_config *cfg = BUILD(&code, "detect", "detect", "train", "resume", "epochs=3", "exist_ok");
    CHECK_MSG(cfg != NULL && code == 0, "%s", yolo_last_error());
    if (cfg) {
        bool b = false;
        int64_t epochs = 0;
        CHECK(yolo_config_get_bool(cfg, "resume", &b) == YOLO_OK && b);
        CHECK(yolo_config_get_bool(cfg, "exist_ok", &b) == YOLO_OK && b);
        CHECK(yolo_config_get_int(cfg, "epochs", &epochs) == YOLO_OK && epochs == 3);
        CHECK(strcmp(str(cfg, "task"), "detect") == 0 && strcmp(str(cfg, "mode"), "train") == 0);
        CHECK(strcmp(str(cfg, "model"), "yolov8n.yaml") == 0 && strcmp(str(cfg, "data"), "coco8.yaml") == 0);
        CHECK(yolo_config_layer_of(cfg, "model") == YOLO_CONFIG_LAYER_TASK);
        CHECK(strcmp(yolo_config_source(cfg, "epochs"), "command line") == 0);
        yolo_config_free(cfg);
    }
    cfg = BUILD(&code, "segment", "--task", "segment", "val", "model=my.yaml", "resume=runs/x/last.ckpt");
    CHECK(cfg != NULL);
    if (cfg) {
        CHECK(strcmp(str(cfg, "mode"), "val") == 0 && strcmp(str(cfg, "model"), "my.yaml") == 0);
        CHECK(strcmp(str(cfg, "data"), "coco8-seg.yaml") == 0 && strcmp(str(cfg, "resume"), "runs/x/last.ckpt") == 0);
        yolo_config_free(cfg);
    }
    cfg = BUILD(&code, "classify", "task=classify", "predict", "source=images/");
    CHECK(cfg != NULL);
    if (cfg) {
        CHECK(strcmp(str(cfg, "task"), "classify") == 0 && strcmp(str(cfg, "source"), "images/") == 0);
        yolo_config_free(cfg);
    }
    /* cfg=FILE: above the task plugin, below the command line; it may name the task */
    char path[] = "/tmp/yolo_test_cli_cfg_XXXXXX";
    int fd = mkstemp(path);
    const char *yaml = "task: segment\nepochs: 7\nlr0: 0.003\nmodel: custom.yaml\n";
    CHECK(fd >= 0 && write(fd, yaml, strlen(yaml)) == (ssize_t)strlen(yaml));
    close(fd);
    char cfg_arg[64];
    snprintf(cfg_arg, sizeof cfg_arg, "cfg=%s", path);
    cfg = BUILD(&code, "segment", "train", cfg_arg, "lr0=0.004");
    CHECK_MSG(cfg != NULL, "%s", yolo_last_error());
    if (cfg) {
        int64_t epochs = 0;
        double lr0 = 0;
        CHECK(yolo_config_get_int(cfg, "epochs", &epochs) == YOLO_OK && epochs == 7);
        CHECK(yolo_config_get_float(cfg, "lr0", &lr0) == YOLO_OK && lr0 == 0.004);
        CHECK(strcmp(str(cfg, "model"), "custom.yaml") == 0);
        CHECK(strstr(yolo_config_source(cfg, "epochs"), path) != NULL);
        yolo_config_free(cfg);
    }
    unlink(path);
    /* an args.yaml that Ultralytics wrote: every key it repeats at its default passes (the
     * refused ones too), pose/kobj/save_dir (keys of no task here) are skipped */
    /* and one in 8.4's form: multi_scale a fraction, compile, end2end,
     * cls_pw at their defaults, rle and angle (no task here) skipped */
    static const char *const ultra_versions[] = {"8.3.163", "8.4"};
    for (int v = 0; v < 2; v++) {
        char ultra_arg[1200];
        snprintf(ultra_arg, sizeof ultra_arg, "cfg=%s/tests/fixtures/ultralytics-%s-args.yaml",
                 getenv("YOLO_SOURCE_DIR"), ultra_versions[v]);
        cfg = BUILD(&code, "detect", "train", ultra_arg);
        CHECK_MSG(cfg != NULL, "%s: %s", ultra_versions[v], yolo_last_error());
        if (cfg) {
            yolo_settings set;
            CHECK_MSG(yolo_settings_read(cfg, YOLO_SETTINGS_TRAIN | YOLO_SETTINGS_PREDICT, &set) == YOLO_OK, "%s: %s",
                      ultra_versions[v], yolo_last_error());
            CHECK(set.run.imgsz == 160 && set.run.batch == 4 && set.optim.epochs == 2 &&
                  set.optim.warmup_bias_lr == 0.0 && set.loader.multi_scale == 0);
            CHECK(strcmp(str(cfg, "tracker"), "botsort.yaml") == 0 && strcmp(str(cfg, "name"), "yolov8n-coco8") == 0);
            yolo_config_free(cfg);
        }
    }
    static const char *const gains[][2] = {{"kobj: 1\npose: 5.0\n", ":2: pose=5.0 is a loss gain of Ultralytics' pose task"},
                                           {"angle: 1.0\nrle: 2\n", ":2: rle=2 is a loss gain of Ultralytics' pose (8.4) task"},
                                           {"angle: 0.5\n", ":1: angle=0.5 is a loss gain of Ultralytics' obb (8.4) task"}};
    for (size_t g = 0; g < sizeof gains / sizeof *gains; g++) {
        char gains_path[] = "/tmp/yolo_test_cli_gains_XXXXXX", gains_arg[64];
        fd = mkstemp(gains_path);
        size_t glen = strlen(gains[g][0]);
        CHECK(fd >= 0 && write(fd, gains[g][0], glen) == (ssize_t)glen);
        close(fd);
        snprintf(gains_arg, sizeof gains_arg, "cfg=%s", gains_path);
        cfg = BUILD(&code, "detect", "train", gains_arg);
        CHECK_MSG(cfg == NULL && test_error_mentions(gains[g][1]), "%s", yolo_last_error());
        yolo_config_free(cfg);
        unlink(gains_path);
    }
    /* no task given: the model yaml's, as Ultralytics guesses it (the task
     * embedding the name, or owning a file's head), from the command line or cfg= */
    cfg = BUILD(&code, "segment", "train", "model=yolov8n-seg.yaml");
    CHECK_MSG(cfg != NULL, "%s", yolo_last_error());
    yolo_config_free(cfg);
    cfg = BUILD(&code, "classify", "val", "model=yolo11s-cls.yaml", "data=mnist160");
    CHECK_MSG(cfg != NULL && strcmp(str(cfg, "data"), "mnist160") == 0, "%s", yolo_last_error());
    yolo_config_free(cfg);
    cfg = BUILD(&code, "detect", "detect", "train", "model=yolov8n-seg.yaml"); /* a task given wins */
    CHECK_MSG(cfg != NULL, "%s", yolo_last_error());
    yolo_config_free(cfg);
    cfg = BUILD(&code, "detect", "train", "model=yolov8n-pose.yaml"); /* no loaded task owns it: the default */
    CHECK_MSG(cfg != NULL, "%s", yolo_last_error());
    yolo_config_free(cfg);
    const char *heads[][2] = {{"[[-1, 1, Classify, [nc]]]", "classify"}, {"[[[-1], 1, Segment, [nc, 32, 64]]]", "segment"},
                              {"[[[-1], 1, Detect, [nc]]]", "detect"}};
    for (int i = 0; i < 3; i++) {
        char model_path[] = "/tmp/yolo_test_cli_model_XXXXXX.yaml", model_arg[80];
        fd = mkstemps(model_path, 5);
        char text[256];
        snprintf(text, sizeof text, "nc: 3\nbackbone: [[-1, 1, Conv, [16, 3, 2]]]\nhead: %s\n", heads[i][0]);
        CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
        snprintf(model_arg, sizeof model_arg, "model=%s", model_path);
        cfg = BUILD(&code, heads[i][1], "train", model_arg);
        CHECK_MSG(cfg != NULL, "%s: %s", heads[i][1], yolo_last_error());
        yolo_config_free(cfg);
        /* the same model named in cfg= */
        char cfg_path[] = "/tmp/yolo_test_cli_cfg_XXXXXX", model_cfg_arg[64];
        snprintf(text, sizeof text, "model: %s\n", model_path);
        fd = mkstemp(cfg_path);
        CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
        snprintf(model_cfg_arg, sizeof model_cfg_arg, "cfg=%s", cfg_path);
        cfg = BUILD(&code, heads[i][1], "train", model_cfg_arg);
        CHECK_MSG(cfg != NULL, "cfg= %s: %s", heads[i][1], yolo_last_error());
        yolo_config_free(cfg);
        unlink(cfg_path);
        unlink(model_path);
    }
    /* plugin keys: defaults at the task layer, bare bool keys, validation */
    setenv("YOLO_PLUGIN_PATH", fixture_dir, 1);
    cfg = BUILD(&code, "fixture", "--task", "fixture", "train", "fixture_flag", "fixture_gain=3", "fixture_style=FANCY");
    CHECK_MSG(cfg != NULL, "%s", yolo_last_error());
    if (cfg) {
        bool flag = false;
        double gain = 0;
        CHECK(yolo_config_get_bool(cfg, "fixture_flag", &flag) == YOLO_OK && flag);
        CHECK(yolo_config_get_float(cfg, "fixture_gain", &gain) == YOLO_OK && gain == 3.0);
        CHECK(strcmp(str(cfg, "fixture_style"), "fancy") == 0 && strcmp(str(cfg, "model"), "fixture-model.yaml") == 0);
        yolo_config_free(cfg);
    }
    /* Ultralytics' modes and commands that are not built say so (track was "did you mean 'train'") */
    EXPECT(run(real_dir, "track", "model=x.pt", NULL), 2, "err", "'track' is Ultralytics' but not built here", "videos");
    EXPECT(run(real_dir, "detect", "benchmark", NULL), 2, "err", "'benchmark' is Ultralytics' but not built here");
    /* a missing data yaml is named once (the session's context is the loader's own prefix) */
    EXPECT(run(real_dir, "detect", "val", "data=nope.yaml", "model=yolov8n.yaml", NULL), 1, "err",
           "data=nope.yaml: no such yaml, folder or archive");
    CHECK(strstr(err_text, "data=nope.yaml: data=nope.yaml") == NULL);
    /* a key only other tasks read: a warning that it has no effect (the fixture reads box) */
    EXPECT(run(fixture_dir, "fixture", "train", "dropout=0.1", "box=5", NULL), 1, "err",
           "WARNING: dropout=0.1 (command line) has no effect on task 'fixture' (its reader: the classify plugin");
    CHECK(strstr(err_text, "box=") == NULL);
    EXPECT(run(fixture_dir, "oldminor", "train", "dropout=0.1", NULL), 1, "err", "oldminor");
    CHECK(strstr(err_text, "WARNING") == NULL); /* it does not say what it reads */
    EXPECT(run(real_dir, "detect", "val", "overlap_mask=false", "mask_ratio=4", "conf=0.1", "model=nope.yaml", "epochs=3",
               "source=a.jpg", "imgsz=64", NULL),
           1, "err", "WARNING: overlap_mask=false (command line) has no effect on task 'detect'",
           "WARNING: epochs=3 (command line) has no effect: a training key, and the mode is val",
           "WARNING: source=a.jpg (command line) has no effect: a predict key, and the mode is val");
    CHECK(strstr(err_text, "imgsz=") == NULL); /* every mode reads it */
    CHECK(strstr(err_text, "mask_ratio") == NULL && strstr(err_text, "conf=") == NULL); /* a default; detect's */
    setenv("YOLO_PLUGIN_PATH", fixture_dir, 1);
    cfg = BUILD(&code, "fixture", "--task", "fixture", "train", "fixture_gian=3");
    CHECK(cfg == NULL && code == YOLO_EXIT_USAGE && test_error_mentions("did you mean 'fixture_gain'"));
    cfg = BUILD(&code, "badabi", "--task", "badabi", "train");
    CHECK(cfg == NULL && code == YOLO_EXIT_FAILURE && test_error_mentions("libyolo-badabi.so"));
    cfg = BUILD(&code, "detect", "detect", "train", "nosuchword");
    CHECK(cfg == NULL && code == YOLO_EXIT_USAGE && test_error_mentions("'nosuchword'"));
    CHECK(yolo_cli_exit_code(YOLO_OK) == 0 && yolo_cli_exit_code(YOLO_ERR_CONFIG) == 2 && yolo_cli_exit_code(YOLO_ERR_IO) == 1);
}

int main(void) {
    const char *bin = getenv("YOLO_BINARY_DIR");
    if (bin == NULL) return test_skip("YOLO_BINARY_DIR is not set (run through ctest)");
    snprintf(yolo_binary, sizeof yolo_binary, "%s/bin/yolo", bin);
    snprintf(real_dir, sizeof real_dir, "%s/lib/yolo/plugins", bin);
    snprintf(fixture_dir, sizeof fixture_dir, "%s/tests/plugin-fixtures", bin);
    if (access(yolo_binary, X_OK) != 0) return test_skip("the yolo binary is not built");
    if (access(fixture_dir, F_OK) != 0) return test_skip("the fixture plugins are not built (tests/plugins.cmake)");
    test_binary();
    test_in_process();
    return test_result("test_cli");
}
