/* The loss scaler's arithmetic (train/grad_scaler.h) against PyTorch's
 * GradScaler defaults: 2^16 at the start, halved (and the growth count
 * reset) on inf/NaN gradients, doubled after 2000 consecutive good steps,
 * not grown past the largest finite float; disabled it scales by 1 and
 * never changes. Scaling the loss gradients multiplies by the scale. */
#include <float.h>
#include <math.h>

#include "test_util.h"
#include "train/grad_scaler.h"

int main(void) {
    yolo_grad_scaler s;
    yolo_grad_scaler_init(&s, true);
    CHECK(s.scale == 65536.0f && s.growth_tracker == 0 && s.skipped == 0);
    yolo_grad_scaler_update(&s, true);
    CHECK(s.scale == 32768.0f && s.growth_tracker == 0 && s.skipped == 1);
    for (int i = 0; i < YOLO_GRAD_SCALER_GROWTH_INTERVAL - 1; i++) yolo_grad_scaler_update(&s, false);
    CHECK(s.scale == 32768.0f && s.growth_tracker == YOLO_GRAD_SCALER_GROWTH_INTERVAL - 1);
    yolo_grad_scaler_update(&s, false); /* the 2000th good step in a row */
    CHECK(s.scale == 65536.0f && s.growth_tracker == 0);
    for (int i = 0; i < 1999; i++) yolo_grad_scaler_update(&s, false);
    yolo_grad_scaler_update(&s, true); /* one bad step resets the count */
    CHECK(s.scale == 32768.0f && s.growth_tracker == 0 && s.skipped == 2);
    yolo_grad_scaler_update(&s, false);
    CHECK(s.growth_tracker == 1);

    float g[3] = {1.5f, -2.0f, 0.0f};
    yolo_grad_scaler_scale(&s, g, 3);
    CHECK(g[0] == 1.5f * 32768.0f && g[1] == -65536.0f && g[2] == 0.0f);

    s.scale = FLT_MAX / 1.5f; /* doubling would overflow: the scale stays */
    s.growth_tracker = YOLO_GRAD_SCALER_GROWTH_INTERVAL - 1;
    yolo_grad_scaler_update(&s, false);
    CHECK(s.scale == FLT_MAX / 1.5f && s.growth_tracker == 0);

    yolo_grad_scaler_init(&s, false);
    yolo_grad_scaler_update(&s, true);
    yolo_grad_scaler_scale(&s, g, 3);
    CHECK(s.scale == 1.0f && s.skipped == 0 && g[1] == -65536.0f);
    return test_result("test_grad_scaler");
}
