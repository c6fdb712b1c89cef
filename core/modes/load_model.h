/* The model val and predict evaluate: a checkpoint's, or a yaml's freshly
 * initialised one (said so). */
#ifndef YOLO_MODES_LOAD_MODEL_H
#define YOLO_MODES_LOAD_MODEL_H

#include "train/session.h"

yolo_status yolo_session_load_model(yolo_session *s);

#endif
