#!/usr/bin/python3
"""Writes the .pt fuzz corpus (fuzz/corpus/pt/*, fuzz/pt_fuzz.c): tiny
checkpoints as Ultralytics saves them (torch.save of a dict holding the
model, fp16), from the stand-in modules of tests/fixtures, each a few KB so
that mutants run fast:
  conv-cls.pt      two Convs and a Linear, the layout every checkpoint has;
  tied.pt          one weight held by two modules (one storage, two views);
  strided.pt       a transposed (non-contiguous) weight;
  deflated.pt      conv-cls.pt re-zipped with deflate (torch.save stores);
  ema-f32.pt       the mid-training form: `model` None, the weights in `ema`,
                   kept float32.
Run with Debian's python3-torch from the repository root:
/usr/bin/python3 fuzz/corpus/make_pt_seeds.py fuzz/corpus/pt
"""
import os
import sys
import zipfile

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures"))
from make_pt_act_fixtures import ClassificationModel  # noqa: E402
from ultralytics_standins import Conv, save_checkpoint  # noqa: E402


def build(seed):
    torch.manual_seed(seed)
    yaml = {"nc": 2, "backbone": [[-1, 1, "Conv", [4, 3, 2]], [-1, 1, "Conv", [8, 3, 2]]],
            "head": [[-1, 1, "Classify", ["nc"]]], "ch": 3, "yaml_file": "tiny-cls.yaml"}
    head = nn.Linear(8, 2)
    return ClassificationModel(yaml, [Conv(3, 4, 3, 2), Conv(4, 8, 3, 2), head], {0: "a", 1: "b"})


def main(out):
    os.makedirs(out, exist_ok=True)
    save_checkpoint(build(0), f"{out}/conv-cls.pt", "classify", 32)
    tied = build(1)
    tied.model[1].bn.bias = tied.model[1].bn.weight  # one parameter under two names: one storage read twice
    save_checkpoint(tied, f"{out}/tied.pt", "classify", 32)
    strided = build(2)
    w = strided.model[2].weight.detach()
    strided.model[2].weight = nn.Parameter(w.t().contiguous().t())  # a transposed view of its storage
    save_checkpoint(strided, f"{out}/strided.pt", "classify", 32)
    with zipfile.ZipFile(f"{out}/conv-cls.pt") as src, \
            zipfile.ZipFile(f"{out}/deflated.pt", "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    ckpt = {"epoch": 3, "model": None, "ema": build(3), "optimizer": None,
            "train_args": {"task": "classify", "imgsz": 32, "data": "fixture"}}
    torch.save(ckpt, f"{out}/ema-f32.pt")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
