# test_draw also checks the detection toolkit's pictures (the confusion
# matrix of boxes, the metric curves), which live in libyolo-detection.
target_link_libraries(test_draw PRIVATE yolo-detection)
