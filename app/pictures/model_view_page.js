// The model view's script (model_view_page.html): one canvas of
// layers (rows) x heads (columns) tiles, drawn once per mode; a click (or
// #layer=N&head=K in the address) shows that head's map enlarged with its
// figures. Everything it draws at start is drawn before data-ready="1".
"use strict";
const t0 = performance.now();
const M = JSON.parse(document.getElementById("meta").textContent);
const raw = atob(document.getElementById("cells").textContent.trim());
const cells = new Uint8Array(raw.length);
for (let i = 0; i < raw.length; ++i) cells[i] = raw.charCodeAt(i);
const NQ = M.nq, NK = M.nk, TILE = M.tile, GAP = 2, LEFT = 54;
const nL = M.layers.length, nH = M.heads.length;
// The figures per head, in the order of M.figures: [entropy, sink, recent, distance].
const MODES = [["map", "map"], ["entropy", "entropy"], ["sink", "first key"],
               ["recent", "recent keys"], ["distance", "distance"]];
const EXPLAIN = {
  map: "each tile: the head's map (rows queries, columns keys), block maximum, " +
       (M.scale === "log" ? "log scale from " + M.scale_lo.toExponential(0) + " to the head's largest weight"
        : M.scale === "percentile" ? "scaled to the head's 99th percentile"
        : "linear to the head's largest weight (its 99th percentile when a few cells dwarf the rest)"),
  entropy: "mean entropy of a row over ln(keys): 0 = one key takes all, 1 = uniform",
  sink: "mean weight on the first key (the attention sink)",
  recent: "mean weight on the last " + M.recent + " keys before the query",
  distance: "mean distance from the query to the keys it attends, over the keys it could see",
};
const grid = document.getElementById("grid");
grid.width = LEFT + nH * (TILE + GAP);
grid.height = 18 + nL * (TILE + GAP);
const ctx = grid.getContext("2d", { willReadFrequently: true });  // redrawn per mode
const ramp = M.viridis;  // 256 x [r, g, b]

function tileOffset(li, hi) { return ((li * nH) + hi) * NQ * NK; }
// A thumbnail byte: 0 is a masked cell (hatched grey, as the explorer draws
// it), 1..255 a weight from just above 0 to the head's largest.
const MASKED = [[200, 200, 200], [238, 238, 238]];
function cellColour(b, x, y) { return b === 0 ? MASKED[((x + y) >> 1) % 3 === 0 ? 0 : 1] : ramp[Math.round((b - 1) * 255 / 254)]; }
const FIG = {entropy: 0, sink: 1, recent: 2, distance: 3};
function figure(li, hi, mode) { return M.layers[li].figures[hi][FIG[mode]]; }
// Each layer's figures coloured from that layer's smallest to its largest,
// so the heads of one layer can be told apart: [lo, hi] per layer and mode.
function layerRange(li, mode) {
  let lo = Infinity, hi = -Infinity;
  for (const f of M.layers[li].figures) {
    const v = f[FIG[mode]];
    if (v !== null) lo = Math.min(lo, v), hi = Math.max(hi, v);
  }
  return lo <= hi ? [lo, hi] : [0, 1];
}
function scaled(li, hi, mode) {
  const v = figure(li, hi, mode);
  if (v === null) return null;
  const [lo, top] = layerRange(li, mode);
  return top > lo ? (v - lo) / (top - lo) : 0.5;
}
function drawTile(img, li, hi, x0, y0, mode) {
  const w = grid.width, d = img.data;
  const put = (x, y, c) => { const p = 4 * ((y0 + y) * w + x0 + x); d[p] = c[0]; d[p + 1] = c[1]; d[p + 2] = c[2]; d[p + 3] = 255; };
  if (mode === "map") {
    const off = tileOffset(li, hi);
    for (let y = 0; y < TILE; ++y) {
      const r = Math.min(NQ - 1, Math.floor(y * NQ / TILE));
      for (let x = 0; x < TILE; ++x) {
        const c = Math.min(NK - 1, Math.floor(x * NK / TILE));
        put(x, y, cellColour(cells[off + r * NK + c], x, y));
      }
    }
    return;
  }
  const v = scaled(li, hi, mode);
  const c = v === null ? [200, 200, 200] : ramp[Math.max(0, Math.min(255, Math.round(v * 255)))];
  for (let y = 0; y < TILE; ++y) for (let x = 0; x < TILE; ++x) put(x, y, c);
}
function draw(mode) {
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, grid.width, grid.height);
  const img = ctx.getImageData(0, 0, grid.width, grid.height);
  for (let li = 0; li < nL; ++li)
    for (let hi = 0; hi < nH; ++hi)
      drawTile(img, li, hi, LEFT + hi * (TILE + GAP), 18 + li * (TILE + GAP), mode);
  ctx.putImageData(img, 0, 0);
  ctx.fillStyle = "#444";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  const every = Math.max(1, Math.ceil(14 / (TILE + GAP)));
  for (let li = 0; li < nL; li += every)
    ctx.fillText("layer " + M.layers[li].layer, 2, 18 + li * (TILE + GAP) + TILE / 2);
  ctx.textAlign = "center";
  const hevery = Math.max(1, Math.ceil(22 / (TILE + GAP)));
  for (let hi = 0; hi < nH; hi += hevery)
    ctx.fillText(String(M.heads[hi]), LEFT + hi * (TILE + GAP) + TILE / 2, 9);
  document.body.dataset.mode = mode;
  document.getElementById("explain").textContent = EXPLAIN[mode] +
    (mode === "map" ? "" : "; colours scaled per layer: each row from its layer's min to its max");
  document.getElementById("lo").textContent =
    mode !== "map" ? "layer min" : M.scale === "log" ? "log scale " + M.scale_lo.toExponential(0) : "0";
  document.getElementById("hi").textContent =
    mode !== "map" ? "layer max" : M.scale === "percentile" ? "head p99" : "head max";
  for (const b of document.querySelectorAll("#modes button")) b.classList.toggle("on", b.dataset.mode === mode);
}
function fmt(v) { return v === null ? "-" : v.toFixed(3); }
function pick(li, hi) {
  const L = M.layers[li];
  document.getElementById("dtitle").textContent = "layer " + L.layer + ", head " + M.heads[hi] + " (" + L.type + ")";
  const big = document.getElementById("big");
  big.width = NK; big.height = NQ;
  const g = big.getContext("2d"), img = g.createImageData(NK, NQ), off = tileOffset(li, hi);
  for (let i = 0; i < NQ * NK; ++i) {
    const c = cellColour(cells[off + i], i % NK, Math.floor(i / NK));
    img.data[4 * i] = c[0]; img.data[4 * i + 1] = c[1]; img.data[4 * i + 2] = c[2]; img.data[4 * i + 3] = 255;
  }
  g.putImageData(img, 0, 0);
  // Axes: query and key positions at the cells' edges (cell i holds tokens from i * L / NQ).
  for (const [id, n, tokens] of [["qticks", NQ, M.L], ["kticks", NK, M.T]]) {
    const box = document.getElementById(id);
    box.textContent = "";
    for (const frac of [0, 0.25, 0.5, 0.75, 1]) {
      const s = document.createElement("span");
      const t = frac === 1 ? tokens - 1 : Math.round(frac * tokens);
      s.textContent = String(t);
      s.className = id === "qticks" ? "qtick" : "ktick";
      s.style[id === "qticks" ? "top" : "left"] = (100 * (t + 0.5) / tokens) + "%";
      box.append(s);
    }
  }
  const mode = document.body.dataset.mode;
  const range = document.getElementById("drange");
  if (mode !== "map") {
    const [lo, top] = layerRange(li, mode);
    range.textContent = "tile colours (" + mode + "): layer " + L.layer + "'s heads from " + fmt(lo) + " to " + fmt(top);
  } else {
    range.textContent = "";
  }
  const f = L.figures[hi], raw = L.raw[hi];
  const rows = [["largest weight", L.max[hi].toFixed(4)],
                ["entropy (nats)", fmt(raw[0])], ["entropy / ln(keys)", fmt(f[0])],
                ["weight on the first key", fmt(f[1])], ["weight on the last " + M.recent + " keys", fmt(f[2])],
                ["mean distance (tokens)", fmt(raw[3])]];
  const t = document.getElementById("dfigs");
  t.textContent = "";
  for (const [k, v] of rows) {
    const tr = t.insertRow();
    tr.insertCell().textContent = k;
    const td = tr.insertCell(); td.textContent = v; td.className = "v";
  }
  document.getElementById("dfiles").textContent = L.dir ? "this layer's files: " + L.dir + "/ (" + L.files.join(", ") + ")" : "";
  const h = document.getElementById("hover");
  h.style.display = "block";
  h.style.left = (LEFT + hi * (TILE + GAP) - 2) + "px";
  h.style.top = (grid.offsetTop + 18 + li * (TILE + GAP) - 2) + "px";
  h.style.width = h.style.height = (TILE + 4) + "px";
  document.body.dataset.picked = L.layer + "," + M.heads[hi];
}
document.getElementById("title").textContent = M.title;
document.getElementById("subtitle").textContent = M.subtitle;
const modes = document.getElementById("modes");
for (const [m, name] of MODES) {
  const b = document.createElement("button");
  b.textContent = name; b.dataset.mode = m;
  b.onclick = () => draw(m);
  modes.append(b, " ");
}
{
  const r = document.getElementById("ramp").getContext("2d"), img = r.createImageData(256, 1);
  for (let i = 0; i < 256; ++i) { img.data[4 * i] = ramp[i][0]; img.data[4 * i + 1] = ramp[i][1]; img.data[4 * i + 2] = ramp[i][2]; img.data[4 * i + 3] = 255; }
  r.putImageData(img, 0, 0);
}
grid.addEventListener("click", (e) => {
  const rect = grid.getBoundingClientRect();
  const x = (e.clientX - rect.left) * grid.width / rect.width, y = (e.clientY - rect.top) * grid.height / rect.height;
  const hi = Math.floor((x - LEFT) / (TILE + GAP)), li = Math.floor((y - 18) / (TILE + GAP));
  if (hi >= 0 && hi < nH && li >= 0 && li < nL) pick(li, hi);
});
draw(M.mode);
{
  const want = new URLSearchParams(location.hash.slice(1));
  const li = M.layers.findIndex((L) => String(L.layer) === want.get("layer"));
  const hi = M.heads.findIndex((h) => String(h) === want.get("head"));
  if (want.get("mode") && EXPLAIN[want.get("mode")]) draw(want.get("mode"));
  if (li >= 0 && hi >= 0) pick(li, hi);
}
document.body.dataset.layers = nL;
document.body.dataset.heads = nH;
document.body.dataset.setupMs = Math.round(performance.now() - t0);
document.body.dataset.ready = "1";
