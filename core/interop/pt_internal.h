/* Shared by the .c files of core/interop. */
#ifndef YOLO_INTEROP_PT_INTERNAL_H
#define YOLO_INTEROP_PT_INTERNAL_H

#include <stddef.h>

#include "interop/pickle.h"
#include "interop/pt_import.h"

/* core/interop/pt_yaml.c: the pickled model yaml (a dict) as yaml text
 * that model_yaml.c parses to the same spec, but for a bare SPPF row whose
 * cv1 the pickle holds unactivated (pt->acts), written out in full. `what`
 * names the file. */
yolo_status yolo_pt_yaml_text(const yolo_pk_value *yaml, const yolo_pt_model *pt, const char *what, char **text,
                              size_t *len);

#endif
