/* The `yolo` executable: everything is in libyolo (core/cli/cli_main.c). */
#include "cli/cli.h"

int main(int argc, char **argv) { return yolo_cli_main(argc, argv); }
