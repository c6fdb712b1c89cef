/* `yolo checks`: version, the CPU's ISA level, CPU backend, Vulkan, MPI, and the plugins found. */
#include "backend/backend.h"
#include "cli/cli.h"
#include "data/image.h"
#include "dist/dist.h"
#include "plugin/plugin_loader.h"
#include "backend/cpu/conv_path.h"
#include "util/cpu_isa.h"

#include <cblas.h>
#include <dnnl.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_indented(FILE *out, const char *text) {
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0) fprintf(out, "  %.*s\n", (int)len, p);
        p += len + (nl != NULL);
    }
}

int yolo_cli_checks(FILE *out) {
    fprintf(out, "yolo %s (plugin ABI %d.%d)\n", YOLO_VERSION, YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR);

    char isa[512];
    yolo_cpu_isa_describe(isa, sizeof isa); /* the ISA that runs, YOLO_CPU_ISA's cap */
    fprintf(out, "%s\n", isa);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const dnnl_version_t *dnnl = dnnl_version();
    fprintf(out, "CPU backend: %ld cores online (threads=0 uses one thread per core)\n", cores);
    fprintf(out, "  oneDNN %d.%d.%d\n", dnnl->major, dnnl->minor, dnnl->patch);
    fprintf(out, "  %s\n", yolo_cpu_conv_path_description());
    yolo_backend *cpu = NULL;
    if (yolo_cpu_backend_create(1, &cpu) == YOLO_OK) {
        yolo_backend_set_amp(cpu, true);
        fprintf(out, "  amp=True trains with %s\n", yolo_backend_precision(cpu));
        yolo_backend_free(cpu);
    }
    const char *blas = openblas_get_config();
    fprintf(out, "  %s (kernel %s, %d threads)\n", blas ? blas : "OpenBLAS", openblas_get_corename(),
            openblas_get_num_threads());

    char vulkan[8192] = "";
    yolo_vulkan_report(vulkan, sizeof vulkan);
    fprintf(out, "Vulkan:\n");
    print_indented(out, vulkan[0] ? vulkan : "(no report)");
    yolo_backend *vk = NULL;
    if (yolo_vulkan_backend_create(-1, &vk) == YOLO_OK) { /* the device device=vulkan picks */
        yolo_backend_set_amp(vk, true);
        fprintf(out, "  amp=True on %s trains with %s\n", yolo_backend_name(vk), yolo_backend_precision(vk));
        yolo_backend_free(vk);
    }

    char formats[256];
    yolo_image_formats_describe(formats, sizeof formats);
    fprintf(out, "images: %s\n", formats);

    char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(mpi, &len);
    char *nl = strchr(mpi, '\n');
    if (nl) *nl = '\0';
    yolo_dist_env env = yolo_dist_env_detect();
    fprintf(out, "MPI: %s; DDP with world=N or device=vulkan:0,1 (re-launches under mpirun)%s", mpi,
            env.world > 1 ? "" : "\n");
    if (env.world > 1) fprintf(out, "; this is rank %d of %d (%s)\n", env.rank, env.world, env.launcher);

    yolo_plugin_dirs dirs;
    yolo_plugin_search_dirs(&dirs);
    fprintf(out, "plugins: searched, in order:\n");
    for (int i = 0; i < dirs.n; i++)
        fprintf(out, "  %s (%s%s)\n", dirs.dir[i], dirs.origin[i], access(dirs.dir[i], F_OK) == 0 ? "" : ", missing");
    yolo_plugin_found *found;
    int n, failed = 0;
    if (yolo_plugin_scan(&found, &n) != YOLO_OK) {
        fprintf(out, "  cannot list plugins: %s\n", yolo_last_error());
        return YOLO_EXIT_FAILURE;
    }
    if (n == 0) fprintf(out, "  no task plugins (%s*%s) found\n", YOLO_PLUGIN_PREFIX, YOLO_PLUGIN_SUFFIX);
    for (int i = 0; i < n; i++) {
        const yolo_plugin_found *f = &found[i];
        if (f->shadowed_by >= 0) {
            fprintf(out, "  %-10s shadowed by %s: %s\n", f->task, found[f->shadowed_by].path, f->path);
        } else if (f->table != NULL) {
            const yolo_task *t = f->table;
            fprintf(out, "  %-10s %-8s ABI %d.%d  %d head module%s, %d key%s  %s\n", t->name, t->version ? t->version : "?",
                    t->abi.major, t->abi.minor, t->n_modules, t->n_modules == 1 ? "" : "s", t->n_config_keys,
                    t->n_config_keys == 1 ? "" : "s", f->path);
            if (t->description) fprintf(out, "             %s\n", t->description);
        } else {
            failed++;
            fprintf(out, "  %-10s FAILED: %s\n", f->task, f->error);
        }
    }
    free(found);
    if (failed) fprintf(out, "%d plugin file%s failed to load\n", failed, failed > 1 ? "s" : "");
    return failed ? YOLO_EXIT_FAILURE : YOLO_EXIT_OK;
}
