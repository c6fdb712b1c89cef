#!/usr/bin/python3
"""The PyTorch training baseline (../shared/bench/torch_yolo_baseline.py, left as it is) with one
more mode: the forward pass under torch.autocast("cpu", dtype=torch.bfloat16), as PyTorch's CPU
mixed precision is meant to be used (backward and the SGD step outside autocast, fp32 master
weights, the surrogate loss summed in fp32).

    torch_autocast_baseline.py BASELINE.py --worker '{"autocast": true, ...the baseline's worker keys}'

Without "autocast" (or false) it runs the baseline's worker unchanged. Prints the baseline's
RESULT line, with "autocast" and "torch" (its version) added. ONEDNN_VERBOSE=1 in the environment
shows which kernels PyTorch's oneDNN ran (jit:avx512_core_bf16 where it used the bf16 instructions)."""
import importlib.util
import json
import sys

import torch


def load_baseline(path):
    spec = importlib.util.spec_from_file_location("torch_yolo_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def with_autocast(build):
    def build_autocast(task):
        model = build(task)
        forward = model.forward

        def forward_autocast(*args, **kwargs):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return forward(*args, **kwargs)

        model.forward = forward_autocast
        return model

    return build_autocast


def main():
    if len(sys.argv) != 4 or sys.argv[2] != "--worker":
        sys.exit(__doc__)
    mod = load_baseline(sys.argv[1])
    cfg = json.loads(sys.argv[3])
    autocast = bool(cfg.pop("autocast", False))
    if autocast:
        mod.build = with_autocast(mod.build)
    result = mod.run_one(cfg)
    result["autocast"] = autocast
    result["torch"] = torch.__version__
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
