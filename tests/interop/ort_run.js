// Runs an exported ONNX file in ONNX Runtime (the npm package
// onnxruntime-node, CPU; scripts/install-deps.sh installs it) for
// tests/test_interop_onnx.c:
//   NODE_PATH=<dir>/node_modules node ort_run.js MODEL INPUT.f32 N,C,H,W OUT_PREFIX
// writes OUT_PREFIX.<output name>.f32 (float32). Exit 3 when the package is absent.
'use strict';
const fs = require('fs');
let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.log('onnxruntime-node is not installed: ' + e.message);
  process.exit(3);
}
const [model, input, dims, prefix] = process.argv.slice(2);
(async () => {
  const session = await ort.InferenceSession.create(model);
  const buf = fs.readFileSync(input);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
  const feeds = {images: new ort.Tensor('float32', data, dims.split(',').map(Number))};
  const results = await session.run(feeds);
  for (const name of session.outputNames) {
    const t = results[name];
    fs.writeFileSync(`${prefix}.${name}.f32`, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    console.log(`onnxruntime ${name}: [${t.dims.join(', ')}]`);
  }
})().catch((e) => {
  console.error('onnxruntime: ' + e.message);
  process.exit(1);
});
