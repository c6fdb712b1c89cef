/* A model's size estimated from its yaml (model_size.h). */
#include "nn/model_size.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Output channels of a row whose first argument is an int or nc, as
 * module_api.c's yolo_module_scale_channels makes them; 0 for any other
 * row. A row of several inputs counts only with nc (a head: Detect,
 * Segment, Pose and OBB end in nc channels per input); Concat's int is a
 * dimension. */
static double row_channels(const model_row *row, const model_scale *scale, int nc) {
    if (row->n_args < 1) return 0;
    const yolo_arg *a = &row->args[0];
    bool is_nc = a->kind == YOLO_ARG_STRING && !strcmp(a->s, "nc") && nc > 0;
    double c = is_nc ? nc : row->n_from == 1 && a->kind == YOLO_ARG_INT && a->i >= 1 ? (double)a->i : 0;
    if (c == 0 || c == nc) return c;
    return ceil(fmin(c, scale->max_channels) * scale->width / 8.0) * 8.0;
}

void model_size_estimate(const model_spec *spec, const model_scale *scale, int nc, int ch, model_size *out) {
    memset(out, 0, sizeof *out);
    out->largest_row = -1;
    double *channels = calloc((size_t)spec->n_rows + 1, sizeof *channels);
    if (!channels) { /* no estimate: the exact count in yolo_module_param still bounds the build */
        return;
    }
    for (int i = 0; i < spec->n_rows; i++) {
        const model_row *row = &spec->rows[i];
        double c_in = 0;
        for (int j = 0; j < row->n_from; j++) {
            int f = row->from[j] < 0 ? i + row->from[j] : row->from[j];
            c_in += f < 0 ? ch : channels[f];
        }
        int n = row->repeats;
        double repeats = n > 1 ? fmax(nearbyint(n * scale->depth), 1.0) : n;
        double c_out = row_channels(row, scale, nc);
        double params = c_out > 0 ? repeats * 9.0 * c_in * c_out : 0;
        channels[i] = c_out > 0 && row->n_from == 1 ? c_out : c_in;
        out->params += params;
        if (params > out->largest) {
            out->largest = params;
            out->largest_row = i;
        }
    }
    free(channels);
}

yolo_status model_size_check(const model_spec *spec, const model_scale *scale, int nc, int ch) {
    model_size size;
    model_size_estimate(spec, scale, nc, ch, &size);
    if (size.params <= (double)YOLO_MODEL_MAX_PARAMS) return YOLO_OK;
    const model_row *row = &spec->rows[size.largest_row];
    char at[160] = "its own widths";
    if (scale->line > 0)
        snprintf(at, sizeof at, "scales: %s: [%g, %g, %g] (depth, width, max_channels)", scale->letter, scale->depth,
                 scale->width, scale->max_channels);
    else if (spec->has_multiples)
        snprintf(at, sizeof at, "depth_multiple %g, width_multiple %g", scale->depth, scale->width);
    /* pointed at the scale the user picked, else at the row that asks most */
    return yolo_error(YOLO_ERR_CONFIG, "%s:%d:%d: about %.3g parameters (layer %d %s, %d repeats: about %.3g) at %s, "
                      "more than the %.3g a model may have", spec->name, scale->line > 0 ? scale->line : row->line,
                      scale->line > 0 ? scale->column : row->column, size.params, size.largest_row, row->module,
                      row->repeats, size.largest, at, (double)YOLO_MODEL_MAX_PARAMS);
}

yolo_status model_activation_check(const model_spec *spec, const double *bytes, int n_layers) {
    double total = 0;
    int largest = 0;
    for (int i = 0; i < n_layers; i++) {
        total += bytes[i];
        if (bytes[i] > bytes[largest]) largest = i;
    }
    if (total <= YOLO_MODEL_MAX_ACTIVATION_BYTES) return YOLO_OK;
    const model_row *row = &spec->rows[largest];
    return yolo_error(YOLO_ERR_CONFIG, "%s:%d:%d: the layers' outputs of one %dx%d image take about %.3g GB (layer %d "
                      "%s about %.3g GB), more than the %.3g GB a model may ask for", spec->name, row->line,
                      row->column, YOLO_MODEL_DEFAULT_IMGSZ, YOLO_MODEL_DEFAULT_IMGSZ, total / 1e9, largest,
                      row->module, bytes[largest] / 1e9, YOLO_MODEL_MAX_ACTIVATION_BYTES / 1e9);
}
