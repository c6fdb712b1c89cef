"""Runs an exported ONNX file through Debian's onnx checker or OpenCV's DNN
module (tests/test_interop_onnx.c drives it).

    onnx_consumers.py check  MODEL
    onnx_consumers.py opencv MODEL INPUT.f32 N,C,H,W OUT_PREFIX OUTPUT_NAME...

opencv writes OUT_PREFIX.<name>.f32 (float32, C order) per output name.
Exit 3 when the consumer's module is not installed (the test skips)."""
import sys


def main():
    mode, model = sys.argv[1], sys.argv[2]
    if mode == "check":
        try:
            import onnx
        except ImportError:
            print("python3-onnx is not installed")
            return 3
        m = onnx.load(model)
        onnx.checker.check_model(m, full_check=True)
        print("onnx.checker: ok (onnx %s, ir_version %d, opset %d)" % (onnx.__version__, m.ir_version,
                                                                     m.opset_import[0].version))
        for p in m.metadata_props:
            print("metadata %s: %s" % (p.key, p.value))
        for kind, values in (("input", m.graph.input), ("output", m.graph.output)):
            for i in values:
                dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in i.type.tensor_type.shape.dim]
                print("%s %s: %s" % (kind, i.name, dims))
        return 0
    try:
        import cv2
        import numpy as np
    except ImportError:
        print("python3-opencv is not installed")
        return 3
    inp, shape, prefix, names = sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
    x = np.fromfile(inp, dtype=np.float32).reshape([int(v) for v in shape.split(",")])
    net = cv2.dnn.readNetFromONNX(model)
    net.setInput(x, "images")
    outs = net.forward(names)
    for name, out in zip(names, outs):
        out.astype(np.float32).tofile("%s.%s.f32" % (prefix, name))
        print("opencv %s %s: %s" % (cv2.__version__, name, list(out.shape)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
