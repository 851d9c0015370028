// Times one ONNX graph in ONNX Runtime (CPU, onnxruntime-node) on an input .npy:
// warm-up runs, then --reps timed runs; prints JSON {model, median_ms, min_ms, times_ms}
// and writes the output as a float32 .npy for checking against attn-run.
// Usage: node run_ort.js MODEL.onnx INPUT.npy OUTPUT.npy [--threads 2] [--reps 5]
"use strict";
const fs = require("fs");
const ort = require("onnxruntime-node");

function readNpy(path) {
  const buf = fs.readFileSync(path);
  const hlen = buf.readUInt16LE(8);
  const header = buf.slice(10, 10 + hlen).toString("latin1");
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True"))
    throw new Error(path + ": expected a C-order little-endian float32 .npy");
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(",").filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + hlen, buf.byteOffset + buf.length));
  return { shape, data };
}

function writeNpy(path, shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  const total = 10 + header.length + 1;
  header += " ".repeat((64 - (total % 64)) % 64) + "\n";
  const head = Buffer.alloc(10);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, "latin1"), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
  const [model, input, output] = args;
  const threads = opt("--threads", 2), reps = opt("--reps", 5);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  const x = readNpy(input);
  const feeds = { x: new ort.Tensor("float32", x.data, x.shape) };
  let out = await session.run(feeds);  // warm-up
  const times = [];
  for (let r = 0; r < reps; ++r) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  writeNpy(output, out.y.dims, out.y.data);
  const sorted = [...times].sort((a, b) => a - b);
  console.log(JSON.stringify({ model, median_ms: sorted[Math.floor((reps - 1) / 2)], min_ms: sorted[0], times_ms: times }));
}

main().catch((e) => { console.error("run_ort: " + e.message); process.exit(1); });
