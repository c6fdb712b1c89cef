/* The `yolo` executable: everything is in libyolo (core/cli/cli_main.c). */
#include <stdio.h>

#include "cli/cli.h"
#include "util/cpu_isa.h"

int main(int argc, char **argv) {
    /* YOLO_CPU_ISA: a bad value stops here; a cap below the machine's puts
     * OPENBLAS_CORETYPE in the environment and re-executes once */
    if (yolo_cpu_isa_setup_process(argv, NULL, false) != YOLO_OK) {
        fprintf(stderr, "yolo: %s: %s\n", yolo_status_name(YOLO_ERR_CONFIG), yolo_last_error());
        return YOLO_EXIT_USAGE;
    }
    return yolo_cli_main(argc, argv);
}
