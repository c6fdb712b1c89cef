/* The Muon half of Ultralytics 8.4's MuSGD (ultralytics/optim/muon.py),
 * built into the optimizer's update graph (optimizer.c): the quintic
 * Newton-Schulz orthogonalization of a parameter's update, and which
 * parameters MuSGD gives three times the learning rate. */
#ifndef YOLO_TRAIN_MUON_H
#define YOLO_TRAIN_MUON_H

#include <stdbool.h>

#include "yolo/graph.h"

/* zeropower_via_newtonschulz5 of u viewed as [rows = u's first dim, rest],
 * times sqrt(max(1, size(-2) / size(-1))) of u's own last two dims (1 for
 * a square conv filter), as muon_update: five iterations of
 * A = X X^T, B = b A + c A A, X = a X + B X from X = u / (|u| + 1e-7),
 * on the transpose when rows > columns. NULL on error (the graph's status). */
yolo_tensor *yolo_muon_orthogonalize(yolo_graph *g, yolo_tensor *u);

/* MuSGD's lr x3 parameters: Ultralytics' pattern (?=.*23)(?=.*cv3)|proto\.semseg
 * on the full name (the class branches of a YOLO26 head at layer 23). */
bool yolo_musgd_boosted(const char *name);

#endif
