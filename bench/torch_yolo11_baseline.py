#!/usr/bin/python3
"""YOLO11n, YOLO12n and YOLOv9t in the PyTorch CPU anchor beside YOLOv8n.

Extends ../shared/bench/torch_yolo_baseline.py (read-only, given with --base):
its Conv, Bottleneck, C2f, SPPF, Concat, Detect and benchmark worker are reused
unchanged; this file adds the modules YOLO11 needs (DWConv, C3k, C3k2,
Attention, PSABlock, C2PSA and Detect's current class branch, Ultralytics 8.3
ultralytics/nn/modules/{conv,block,head}.py semantics) and the yolo11.yaml
layer table at scale n (depth 0.50, width 0.25, max_channels 1024), and for
--model yolo12n YOLO12's A2C2f (ABlock, AAttn: area attention, Ultralytics'
block.py) and the yolo12.yaml table at scale n, and for --model yolov9t the
GELAN modules (RepNCSPELAN4 with RepConv, ELAN1, AConv, SPPELAN) and
yolov9t.yaml with the base script's (YOLOv8) Detect, then runs the base
script's worker with `build` pointing at this model.

    /usr/bin/python3 bench/torch_yolo11_baseline.py --base ../shared/bench/torch_yolo_baseline.py --summary
    /usr/bin/python3 bench/torch_yolo11_baseline.py --base ... --worker '{"task":"detect","mode":"train",...}'

--summary prints the parameter count (2,624,080 for YOLO11n, 2,602,288 for
YOLO12n and 2,128,720 for YOLOv9t at nc 80, as Ultralytics' model.info()),
the proof that the architecture is the same.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_autocast_baseline import load_baseline, with_autocast  # noqa: E402 (bench-local sibling)


def yolo11_modules(b):
    """The YOLO11 modules on top of the base script's Conv / Bottleneck / C2f / Detect."""

    class DWConv(b.Conv):
        def __init__(self, c1, c2, k=1, s=1, act=True):
            super().__init__(c1, c2, k, s, g=math.gcd(c1, c2), act=act)

    class C3k(nn.Module):
        """C3 with k x k inner bottlenecks."""

        def __init__(self, c1, c2, n=1, shortcut=True, g=1, e=0.5, k=3):
            super().__init__()
            c_ = int(c2 * e)
            self.cv1 = b.Conv(c1, c_, 1, 1)
            self.cv2 = b.Conv(c1, c_, 1, 1)
            self.cv3 = b.Conv(2 * c_, c2, 1)
            self.m = nn.Sequential(*(b.Bottleneck(c_, c_, shortcut, g, k=(k, k), e=1.0) for _ in range(n)))

        def forward(self, x):
            return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))

    class C3k2(b.C2f):
        def __init__(self, c1, c2, n=1, c3k=False, e=0.5, g=1, shortcut=True):
            super().__init__(c1, c2, n, shortcut, g, e)
            self.m = nn.ModuleList(
                C3k(self.c, self.c, 2, shortcut, g) if c3k else b.Bottleneck(self.c, self.c, shortcut, g)
                for _ in range(n))

    class Attention(nn.Module):
        def __init__(self, dim, num_heads=8, attn_ratio=0.5):
            super().__init__()
            self.num_heads = num_heads
            self.head_dim = dim // num_heads
            self.key_dim = int(self.head_dim * attn_ratio)
            self.scale = self.key_dim ** -0.5
            h = dim + self.key_dim * num_heads * 2
            self.qkv = b.Conv(dim, h, 1, act=False)
            self.proj = b.Conv(dim, dim, 1, act=False)
            self.pe = b.Conv(dim, dim, 3, 1, g=dim, act=False)

        def forward(self, x):
            B, C, H, W = x.shape
            N = H * W
            q, k, v = self.qkv(x).view(B, self.num_heads, self.key_dim * 2 + self.head_dim, N).split(
                [self.key_dim, self.key_dim, self.head_dim], dim=2)
            attn = ((q.transpose(-2, -1) @ k) * self.scale).softmax(dim=-1)
            x = (v @ attn.transpose(-2, -1)).view(B, C, H, W) + self.pe(v.reshape(B, C, H, W))
            return self.proj(x)

    class PSABlock(nn.Module):
        def __init__(self, c, attn_ratio=0.5, num_heads=4, shortcut=True):
            super().__init__()
            self.attn = Attention(c, attn_ratio=attn_ratio, num_heads=num_heads)
            self.ffn = nn.Sequential(b.Conv(c, c * 2, 1), b.Conv(c * 2, c, 1, act=False))
            self.add = shortcut

        def forward(self, x):
            x = x + self.attn(x) if self.add else self.attn(x)
            return x + self.ffn(x) if self.add else self.ffn(x)

    class C2PSA(nn.Module):
        def __init__(self, c1, c2, n=1, e=0.5):
            super().__init__()
            assert c1 == c2
            self.c = int(c1 * e)
            self.cv1 = b.Conv(c1, 2 * self.c, 1, 1)
            self.cv2 = b.Conv(2 * self.c, c1, 1)
            self.m = nn.Sequential(*(PSABlock(self.c, attn_ratio=0.5, num_heads=self.c // 64) for _ in range(n)))

        def forward(self, x):
            a, c = self.cv1(x).split((self.c, self.c), dim=1)
            return self.cv2(torch.cat((a, self.m(c)), 1))

    class Detect11(b.Detect):
        """Detect with its current (legacy=False) class branch: DWConv + 1x1 Conv pairs."""

        def __init__(self, nc=80, ch=()):
            super().__init__(nc, ch)
            c3 = max(ch[0], min(self.nc, 100))
            self.cv3 = nn.ModuleList(
                nn.Sequential(nn.Sequential(DWConv(x, x, 3), b.Conv(x, c3, 1)),
                              nn.Sequential(DWConv(c3, c3, 3), b.Conv(c3, c3, 1)), nn.Conv2d(c3, self.nc, 1))
                for x in ch)

    class AAttn(nn.Module):
        def __init__(self, dim, num_heads, area=1):
            super().__init__()
            self.area, self.num_heads = area, num_heads
            self.head_dim = dim // num_heads
            self.qkv = b.Conv(dim, 3 * dim, 1, act=False)
            self.proj = b.Conv(dim, dim, 1, act=False)
            self.pe = b.Conv(dim, dim, 7, 1, g=dim, act=False)

        def forward(self, x):
            B, C, H, W = x.shape
            N = H * W
            qkv = self.qkv(x).flatten(2).transpose(1, 2)
            if self.area > 1:
                qkv = qkv.reshape(B * self.area, N // self.area, C * 3)
                B, N, _ = qkv.shape
            q, k, v = (qkv.view(B, N, self.num_heads, self.head_dim * 3).permute(0, 2, 3, 1)
                       .split([self.head_dim, self.head_dim, self.head_dim], dim=2))
            attn = ((q.transpose(-2, -1) @ k) * (self.head_dim ** -0.5)).softmax(dim=-1)
            x = (v @ attn.transpose(-2, -1)).permute(0, 3, 1, 2)
            v = v.permute(0, 3, 1, 2)
            if self.area > 1:
                x = x.reshape(B // self.area, N * self.area, C)
                v = v.reshape(B // self.area, N * self.area, C)
                B, N, _ = x.shape
            x = x.reshape(B, H, W, C).permute(0, 3, 1, 2).contiguous()
            v = v.reshape(B, H, W, C).permute(0, 3, 1, 2).contiguous()
            return self.proj(x + self.pe(v))

    class ABlock(nn.Module):
        def __init__(self, dim, num_heads, mlp_ratio=1.2, area=1):
            super().__init__()
            self.attn = AAttn(dim, num_heads, area)
            self.mlp = nn.Sequential(b.Conv(dim, int(dim * mlp_ratio), 1), b.Conv(int(dim * mlp_ratio), dim, 1, act=False))

        def forward(self, x):
            x = x + self.attn(x)
            return x + self.mlp(x)

    class A2C2f(nn.Module):
        def __init__(self, c1, c2, n=1, a2=True, area=1, residual=False, mlp_ratio=2.0, e=0.5, g=1, shortcut=True):
            super().__init__()
            c_ = int(c2 * e)
            self.cv1 = b.Conv(c1, c_, 1, 1)
            self.cv2 = b.Conv((1 + n) * c_, c2, 1)
            self.gamma = nn.Parameter(0.01 * torch.ones(c2)) if a2 and residual else None
            self.m = nn.ModuleList(nn.Sequential(*(ABlock(c_, c_ // 32, mlp_ratio, area) for _ in range(2))) if a2
                                   else C3k(c_, c_, 2, shortcut, g) for _ in range(n))

        def forward(self, x):
            y = [self.cv1(x)]
            y.extend(m(y[-1]) for m in self.m)
            y = self.cv2(torch.cat(y, 1))
            return x + self.gamma.view(-1, self.gamma.shape[0], 1, 1) * y if self.gamma is not None else y

    class RepConv(nn.Module):
        def __init__(self, c1, c2):
            super().__init__()
            self.act = nn.SiLU()
            self.conv1 = b.Conv(c1, c2, 3, 1, act=False)
            self.conv2 = b.Conv(c1, c2, 1, 1, act=False)

        def forward(self, x):
            return self.act(self.conv1(x) + self.conv2(x))

    class RepBottleneck(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.cv1, self.cv2 = RepConv(c, c), b.Conv(c, c, 3, 1)

        def forward(self, x):
            return x + self.cv2(self.cv1(x))

    class RepCSP(nn.Module):
        def __init__(self, c1, c2, n=1):
            super().__init__()
            c_ = c2 // 2
            self.cv1, self.cv2, self.cv3 = b.Conv(c1, c_, 1, 1), b.Conv(c1, c_, 1, 1), b.Conv(2 * c_, c2, 1)
            self.m = nn.Sequential(*(RepBottleneck(c_) for _ in range(n)))

        def forward(self, x):
            return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))

    class RepNCSPELAN4(nn.Module):
        def __init__(self, c1, c2, c3, c4, n=1, rep=True):
            super().__init__()
            self.cv1 = b.Conv(c1, c3, 1, 1)
            self.cv2 = nn.Sequential(RepCSP(c3 // 2, c4, n), b.Conv(c4, c4, 3, 1)) if rep else b.Conv(c3 // 2, c4, 3, 1)
            self.cv3 = nn.Sequential(RepCSP(c4, c4, n), b.Conv(c4, c4, 3, 1)) if rep else b.Conv(c4, c4, 3, 1)
            self.cv4 = b.Conv(c3 + (2 * c4), c2, 1, 1)

        def forward(self, x):
            y = list(self.cv1(x).chunk(2, 1))
            y.extend(m(y[-1]) for m in [self.cv2, self.cv3])
            return self.cv4(torch.cat(y, 1))

    class ELAN1(RepNCSPELAN4):
        def __init__(self, c1, c2, c3, c4):
            super().__init__(c1, c2, c3, c4, rep=False)

    class AConv(nn.Module):
        def __init__(self, c1, c2):
            super().__init__()
            self.cv1 = b.Conv(c1, c2, 3, 2, 1)

        def forward(self, x):
            return self.cv1(torch.nn.functional.avg_pool2d(x, 2, 1, 0, False, True))

    class SPPELAN(nn.Module):
        def __init__(self, c1, c2, c3, k=5):
            super().__init__()
            self.cv1, self.cv5 = b.Conv(c1, c3, 1, 1), b.Conv(4 * c3, c2, 1, 1)
            self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

        def forward(self, x):
            y = [self.cv1(x)]
            y.extend(self.m(y[-1]) for _ in range(3))
            return self.cv5(torch.cat(y, 1))

    return dict(C3k2=C3k2, C2PSA=C2PSA, A2C2f=A2C2f, Detect=Detect11, Conv=b.Conv, SPPF=b.SPPF,
                RepNCSPELAN4=RepNCSPELAN4, ELAN1=ELAN1, AConv=AConv, SPPELAN=SPPELAN, DetectLegacy=b.Detect)


# (from, repeats, module, args) exactly as in ultralytics/cfg/models/11/yolo11.yaml
YOLO11 = [
    (-1, 1, "Conv", [64, 3, 2]), (-1, 1, "Conv", [128, 3, 2]), (-1, 2, "C3k2", [256, False, 0.25]),
    (-1, 1, "Conv", [256, 3, 2]), (-1, 2, "C3k2", [512, False, 0.25]), (-1, 1, "Conv", [512, 3, 2]),
    (-1, 2, "C3k2", [512, True]), (-1, 1, "Conv", [1024, 3, 2]), (-1, 2, "C3k2", [1024, True]),
    (-1, 1, "SPPF", [1024, 5]), (-1, 2, "C2PSA", [1024]),
    (-1, 1, "Upsample", [None, 2, "nearest"]), ([-1, 6], 1, "Concat", [1]), (-1, 2, "C3k2", [512, False]),
    (-1, 1, "Upsample", [None, 2, "nearest"]), ([-1, 4], 1, "Concat", [1]), (-1, 2, "C3k2", [256, False]),
    (-1, 1, "Conv", [256, 3, 2]), ([-1, 13], 1, "Concat", [1]), (-1, 2, "C3k2", [512, False]),
    (-1, 1, "Conv", [512, 3, 2]), ([-1, 10], 1, "Concat", [1]), (-1, 2, "C3k2", [1024, True]),
    ([16, 19, 22], 1, "Detect", ["nc"]),
]
SCALE_11N = (0.50, 0.25, 1024)
# ultralytics/cfg/models/12/yolo12.yaml
YOLO12 = [
    (-1, 1, "Conv", [64, 3, 2]), (-1, 1, "Conv", [128, 3, 2]), (-1, 2, "C3k2", [256, False, 0.25]),
    (-1, 1, "Conv", [256, 3, 2]), (-1, 2, "C3k2", [512, False, 0.25]), (-1, 1, "Conv", [512, 3, 2]),
    (-1, 4, "A2C2f", [512, True, 4]), (-1, 1, "Conv", [1024, 3, 2]), (-1, 4, "A2C2f", [1024, True, 1]),
    (-1, 1, "Upsample", [None, 2, "nearest"]), ([-1, 6], 1, "Concat", [1]), (-1, 2, "A2C2f", [512, False, -1]),
    (-1, 1, "Upsample", [None, 2, "nearest"]), ([-1, 4], 1, "Concat", [1]), (-1, 2, "A2C2f", [256, False, -1]),
    (-1, 1, "Conv", [256, 3, 2]), ([-1, 11], 1, "Concat", [1]), (-1, 2, "A2C2f", [512, False, -1]),
    (-1, 1, "Conv", [512, 3, 2]), ([-1, 8], 1, "Concat", [1]), (-1, 2, "C3k2", [1024, True]),
    ([14, 17, 20], 1, "Detect", ["nc"]),
]
# ultralytics/cfg/models/v9/yolov9t.yaml (no scales: depth, width 1)
YOLOV9T = [
    (-1, 1, "Conv", [16, 3, 2]), (-1, 1, "Conv", [32, 3, 2]), (-1, 1, "ELAN1", [32, 32, 16]),
    (-1, 1, "AConv", [64]), (-1, 1, "RepNCSPELAN4", [64, 64, 32, 3]), (-1, 1, "AConv", [96]),
    (-1, 1, "RepNCSPELAN4", [96, 96, 48, 3]), (-1, 1, "AConv", [128]), (-1, 1, "RepNCSPELAN4", [128, 128, 64, 3]),
    (-1, 1, "SPPELAN", [128, 64]),
    (-1, 1, "Upsample", [None, 2, "nearest"]), ([-1, 6], 1, "Concat", [1]), (-1, 1, "RepNCSPELAN4", [96, 96, 48, 3]),
    (-1, 1, "Upsample", [None, 2, "nearest"]), ([-1, 4], 1, "Concat", [1]), (-1, 1, "RepNCSPELAN4", [64, 64, 32, 3]),
    (-1, 1, "AConv", [48]), ([-1, 12], 1, "Concat", [1]), (-1, 1, "RepNCSPELAN4", [96, 96, 48, 3]),
    (-1, 1, "AConv", [64]), ([-1, 9], 1, "Concat", [1]), (-1, 1, "RepNCSPELAN4", [128, 128, 64, 3]),
    ([15, 18, 21], 1, "DetectLegacy", ["nc"]),
]
TABLES = {"yolo11n": YOLO11, "yolo12n": YOLO12, "yolov9t": YOLOV9T}
SCALES = {"yolov9t": (1.0, 1.0, 1 << 16)}


def parse_yolo11(b, mods, nc, table=YOLO11, scale=SCALE_11N, ch=3):
    depth, width, max_channels = scale
    chs, layers, save = [ch], [], []
    for i, (f, n, name, args) in enumerate(table):
        args = [nc if a == "nc" else a for a in args]
        n = max(round(n * depth), 1) if n > 1 else n
        if name in ("Conv", "C3k2", "SPPF", "C2PSA", "A2C2f", "RepNCSPELAN4", "ELAN1", "AConv", "SPPELAN"):
            c1, c2 = chs[f], b.make_divisible(min(args[0], max_channels) * width, 8)
            args = [c1, c2, *args[1:]]
            if name in ("C3k2", "C2PSA", "A2C2f"):
                args.insert(2, n)  # repeats inside
                n = 1
            m = mods[name](*args)
        elif name == "Upsample":
            c2, m = chs[f], nn.Upsample(*args)
        elif name == "Concat":
            c2, m = sum(chs[x] for x in f), b.Concat(*args)
        else:  # Detect, or YOLOv8's (legacy) for a model without C3k2 or A2C2f
            c2, m = None, mods[name](args[0], [chs[x] for x in f])
        m.i, m.f = i, f
        save.extend(x % i for x in ([f] if isinstance(f, int) else f) if x != -1)
        layers.append(m)
        if i == 0:
            chs = []
        chs.append(c2)
    return nn.Sequential(*layers), sorted(save)


def make_builder(b, name="yolo11n"):
    mods = yolo11_modules(b)

    def build(task):
        if task != "detect":
            raise ValueError("this baseline builds YOLO11n, YOLO12n and YOLOv9t detect only")
        model = b.YOLO.__new__(b.YOLO)
        nn.Module.__init__(model)
        model.task = task
        model.model, model.save = parse_yolo11(b, mods, 80, TABLES[name], SCALES.get(name, SCALE_11N))
        head = model.model[-1]
        head.stride = torch.tensor([8.0, 16.0, 32.0])
        head.bias_init()
        return model

    return build


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="path of ../shared/bench/torch_yolo_baseline.py")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--worker", type=str, default=None, help="JSON config: run one benchmark, print RESULT JSON")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--model", choices=sorted(TABLES), default="yolo11n")
    args = ap.parse_args()
    b = load_baseline(args.base)
    b.build = make_builder(b, args.model)  # the base worker calls build(task)
    if args.summary:
        m = b.build("detect")
        n_p = sum(p.numel() for p in m.parameters())
        n_g = sum(p.numel() for p in m.parameters() if p.requires_grad)
        print(f"{args.model.upper().replace('N', 'n').replace('V9T', 'v9t')} (nc 80): {n_p:,} parameters, {n_g:,} gradients, analytical fwd GFLOPs at 640 "
              f"{b.count_flops(m, 640, train_mode=False) / 1e9:.3f}")
        return
    if args.worker:
        torch.set_num_threads(args.threads)
        cfg = json.loads(args.worker)
        autocast = bool(cfg.pop("autocast", False))
        if autocast:  # the same wrapper the YOLOv8 autocast baseline uses
            b.build = with_autocast(b.build)
        result = b.run_one(cfg)
        result["autocast"] = autocast
        print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
