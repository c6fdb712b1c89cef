/* fuzz_check.h — invariants the fuzz targets assert on what a reader
 * accepted. A broken one aborts (a finding, like a sanitizer report). */
#ifndef YOLO_FUZZ_CHECK_H
#define YOLO_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "yolo/data.h"

#define FUZZ_INVARIANT(cond)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz: invariant broken at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Instances as yolo/data.h describes them: classes in [0, nc), finite boxes
 * inside the unit square, polygon offsets that start at 0 and never
 * decrease, points and keypoints finite; every array read end to end so
 * ASan sees any short one. */
void fuzz_check_instances(const yolo_instances *ins, int nc);

#endif
