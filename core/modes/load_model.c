/* The model val and predict evaluate (load_model.h). */
#include <stdio.h>

#include "modes/load_model.h"

#include "backend/backend.h"
#include "train/checkpoint.h"

yolo_status yolo_session_load_model(yolo_session *s) {
    const char *model = s->set.run.model;
    yolo_status st;
    if (yolo_is_checkpoint_path(model)) st = yolo_model_from_checkpoint(s, model, &s->model);
    else {
        st = yolo_session_build_model(s, model, &s->model);
        if (!st) printf("WARNING: model=%s is a model yaml: its weights are untrained\n", s->model_name);
    }
    s->tctx.model = s->model;
    if (!st) st = yolo_session_apply_end2end(s);
    return st ? st : yolo_session_check_imgsz(s);
}

yolo_status yolo_session_apply_end2end(yolo_session *s) {
    if (!yolo_config_find_key(s->cfg, "end2end") || yolo_config_is_null(s->cfg, "end2end")) return YOLO_OK;
    bool on;
    yolo_status st = yolo_config_get_bool(s->cfg, "end2end", &on);
    if (st) return st;
    if (yolo_model_has_end2end_head(s->model))
        yolo_model_set_end2end(s->model, on);
    else if (on) /* Ultralytics' Detect.end2end is False without one2one branches: the same run */
        printf("WARNING: end2end=True: %s has no one-to-one (end2end) head, only YOLO26's yamls do; it runs its "
               "NMS head\n", s->model_name);
    return YOLO_OK;
}

yolo_status yolo_session_eval_rect(const yolo_session *s, bool *rect) {
    *rect = true;
    int layer = yolo_config_layer_of(s->cfg, "rect");
    if (layer == YOLO_CONFIG_LAYER_CFG || layer == YOLO_CONFIG_LAYER_CLI) return yolo_config_get_bool(s->cfg, "rect", rect);
    return YOLO_OK;
}

yolo_status yolo_session_apply_half(yolo_session *s) {
    bool half = false;
    yolo_status st = yolo_config_get_bool(s->cfg, "half", &half);
    if (st || !half) return st;
    yolo_backend_set_amp(s->backend, true);
    printf("half=True: %s\n", yolo_backend_precision(s->backend));
    return YOLO_OK;
}
