// The explorer of attn-run's --plot FILE.html (plot_html_page.html): decodes
// the maps (base64 float16), draws the head view (tokens in two columns,
// lines weighted by attention) and one heatmap per head on canvases, and
// answers hover (exact weight) and click (pin a token).
//
// Letters: K heads drawn, NQ query rows and NK key columns (tokens, or
// blocks of tokens); NQ = NK for self-attention.
"use strict";
(function () {
  const t0 = performance.now();
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    return e;
  };
  const meta = JSON.parse($("meta").textContent);
  const NQ = meta.n, NK = meta.nk, K = meta.heads.length;

  // float16 -> float32 for every code: one table, then a lookup per weight.
  const half = new Float32Array(65536);
  for (let c = 0; c < 65536; c++) {
    const e = (c >> 10) & 31, m = c & 1023, s = c & 0x8000 ? -1 : 1;
    half[c] = s * (e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1 + m / 1024) * 2 ** (e - 15));
  }
  const bin = atob($("data").textContent.trim());
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const codes = new Uint16Array(bytes.buffer);  // (K, NQ, NK), little-endian float16
  if (codes.length !== K * NQ * NK)
    throw new Error("attn-run page: expected " + K * NQ * NK + " weights, found " + codes.length);
  const code = (k, i, j) => codes[(k * NQ + i) * NK + j];
  const weight = (k, i, j) => half[code(k, i, j)];
  const fmt = (v) => (v === 0 ? "0 (masked)" : v >= 0.001 ? v.toFixed(4) : v.toExponential(3));
  // A token's label in quotes: query t (a row) or key t (a column).
  const quote = (t) => "\u00ab" + meta.labels[t] + "\u00bb";
  const kquote = (t) => "\u00ab" + meta.key_labels[t] + "\u00bb";
  const head_name = (k) => meta.head_names[k];

  // Colours (--color-scale, as ColourScale::position in the PNG and SVG):
  // linear up to meta.vmax (the 99th percentile when a few cells dwarf the
  // rest), log10 from meta.scale_lo to meta.vmax, or each head up to its own
  // 99th percentile (meta.head_top); masked cells hatched grey.
  const rgb = (c) => (255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0];
  const position = (v, k) => {
    if (!(v > 0)) return 0;  // NaN codes never occur
    const t = meta.scale === "log"
      ? (Math.log10(v) - Math.log10(meta.scale_lo)) / (Math.log10(meta.vmax) - Math.log10(meta.scale_lo))
      : v / (meta.scale === "percentile" ? meta.head_top[k] : meta.vmax);
    return Math.min(1, Math.max(1e-6, t));
  };
  // One colour per float16 code: a table for every head with a scale of its own.
  const luts = [];
  const lut_of = (k) => {
    const slot = meta.scale === "percentile" ? k : 0;
    if (!luts[slot]) {
      const lut = new Uint32Array(65536);
      for (let c = 1; c < 65536; c++) lut[c] = rgb(meta.viridis[Math.round(position(half[c], slot) * 255)]);
      luts[slot] = lut;
    }
    return luts[slot];
  };
  const hatch = [rgb([0xc8, 0xc8, 0xc8]), rgb([0xee, 0xee, 0xee])];
  const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                   "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#ad494a"];
  const head_colour = (k) => (k < palette.length ? palette[k] : "hsl(" + ((k * 137.5) % 360) + ",65%,45%)");

  // What was run.
  $("title").textContent = meta.title;
  $("subtitle").textContent = meta.subtitle;
  for (const [key, value] of meta.facts) {
    const d = el("div"), dt = el("dt"), dd = el("dd");
    dt.textContent = key;
    dd.textContent = value;
    d.append(dt, dd);
    $("facts").append(d);
  }
  $("vmax").textContent = meta.scale === "linear"
    ? (meta.clipped ? "\u2265 " : "") + meta.vmax.toPrecision(3) +
      (meta.clipped ? " (99th percentile; max " + meta.max_value.toPrecision(3) + ")" : "")
    : meta.scale === "log" ? meta.vmax.toPrecision(3) + " (max)" : "\u2265 p99 of each head";
  $("vmin").textContent = meta.scale === "log" ? meta.scale_lo.toExponential(0) : "0";
  $("scale-name").textContent =
    meta.scale === "log" ? "log scale" : meta.scale === "percentile" ? "99th-percentile per head" : "linear";
  $("legend").title = meta.scale_legend;
  {
    const sc = $("scale").getContext("2d");
    meta.viridis.forEach((c, x) => {
      sc.fillStyle = "rgb(" + c.join(",") + ")";
      sc.fillRect(x, 0, 1, 1);
    });
  }
  const select = $("head");
  // One averaged map (--average-heads): the chooser holds just that entry.
  if (meta.averaged) select.querySelector('option[value="all"]').remove();
  meta.heads.forEach((h, k) => {
    const o = el("option");
    o.value = String(k);
    o.textContent = head_name(k);
    select.append(o);
  });
  if (K === 1) select.value = "0";

  // key: the neuron view's key (null: the pinned query's strongest).
  const state = { view: "heads", head: select.value, pinned: null, hover: null, key: null };
  const chosen = () => (state.head === "all" ? [...Array(K).keys()] : [Number(state.head)]);

  const tip = $("tip");
  function show_tip(text, ev) {
    tip.textContent = text;
    tip.hidden = false;
    const x = Math.min(ev.clientX + 14, innerWidth - tip.offsetWidth - 4);
    const y = ev.clientY + 16 + tip.offsetHeight > innerHeight ? ev.clientY - tip.offsetHeight - 8 : ev.clientY + 16;
    tip.style.left = Math.max(0, x) + "px";
    tip.style.top = Math.max(0, y) + "px";
  }
  const hide_tip = () => (tip.hidden = true);

  // ---- Head view: queries on the left, keys on the right.
  const N = Math.max(NQ, NK);  // the taller column
  const row = N <= 16 ? 26 : N <= 64 ? 20 : N <= 256 ? 16 : 13;
  const hv = $("headview");
  hv.style.setProperty("--row", row + "px");
  hv.style.setProperty("--fs", (N <= 16 ? 15 : N <= 64 ? 13 : N <= 256 ? 12 : 10) + "px");
  const qtoks = [], ktoks = [], bars = [];
  for (let t = 0; t < NQ; t++) {
    const q = el("div", "tok");
    q.textContent = meta.labels[t];
    q.dataset.token = String(t);
    qtoks.push(q);
  }
  for (let t = 0; t < NK; t++) {
    const k = el("div", "tok"), bar = el("span", "bar");
    k.textContent = meta.key_labels[t];
    k.prepend(bar);
    k.dataset.token = String(t);
    ktoks.push(k);
    bars.push(bar);
  }
  $("qcol").append(...qtoks);
  $("kcol").append(...ktoks);
  const lines = $("lines");
  const lctx = lines.getContext("2d");
  function size_lines() {
    const room = hv.clientWidth - $("qcol").offsetWidth - $("kcol").offsetWidth - 8;
    const w = Math.max(80, Math.min(360, room));
    const dpr = Math.min(window.devicePixelRatio || 1, 30000 / (N * row));
    lines.style.width = w + "px";
    lines.style.height = N * row + "px";
    lines.width = Math.round(w * dpr);
    lines.height = Math.round(N * row * dpr);
    lctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  const chips = $("chips");
  meta.heads.forEach((h, k) => {
    const c = el("span"), sw = el("span", "swatch");
    sw.style.background = head_colour(k);
    c.append(sw, " " + head_name(k));
    c.title = "show only " + head_name(k);
    c.onclick = () => set_head(String(k));
    chips.append(c);
  });

  // ---- Neuron view (bertviz's), with --save q,k: for the pinned query and
  // one key (hovered in the head view, clicked on a heatmap; else the
  // query's strongest key), each dimension's q, k and q*k, blue for
  // positive, orange for negative, by size within the row. Their sum is q.k;
  // times the scale, the score before the softcap and the biases.
  const neuron = (() => {
    if (!meta.neuron) return null;
    const b = atob($("qk").textContent.trim()), u = new Uint8Array(b.length);
    for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
    return new Float32Array(u.buffer);  // q (K, NQ, D) then k (K, NK, D)
  })();
  const ND = neuron ? meta.neuron.D : 0;
  if (neuron) document.body.classList.add("with-neuron");
  const qvec = (k, i) => neuron.subarray((k * NQ + i) * ND, (k * NQ + i + 1) * ND);
  const kvec = (k, j) => neuron.subarray(K * NQ * ND + (k * NK + j) * ND, K * NQ * ND + (k * NK + j + 1) * ND);
  function neuron_row(name, v) {
    const r = el("div", "nrow"), lab = el("span", "nlab"), cells = el("span", "cells");
    lab.textContent = name;
    let top = 0;
    for (const x of v) top = Math.max(top, Math.abs(x));
    v.forEach((x, d) => {
      const c = el("span"), a = top > 0 ? Math.abs(x) / top : 0;
      c.style.background = x >= 0 ? "rgba(31,119,180," + a + ")" : "rgba(255,127,14," + a + ")";
      c.title = name + "[" + d + "] = " + x.toPrecision(4);
      cells.append(c);
    });
    r.dataset.row = name;
    r.append(lab, cells);
    return r;
  }
  function draw_neuron() {
    const sec = $("neuron"), p = state.pinned;
    sec.hidden = !(neuron && p && p.side === "q");
    if (sec.hidden) return;
    const i = p.t, k = chosen()[0];
    let j = state.key;
    if (j === null || !(j < NK)) {  // the pinned query's strongest key in this head
      j = 0;
      for (let u = 1; u < NK; u++) if (weight(k, i, u) > weight(k, i, j)) j = u;
    }
    const q = qvec(k, i), kk = kvec(k, j), prod = q.map((x, d) => x * kk[d]);
    let dot = 0;
    for (const x of prod) dot += x;
    $("neuron-title").textContent = "Neuron view: " + head_name(k) + ", query " + i + " " + quote(i) +
      " · key " + j + " " + kquote(j) + (state.head === "all" && K > 1 ? " (choose a head above for another)" : "");
    const rows = $("neuron-rows");
    rows.textContent = "";
    rows.style.setProperty("--cw", Math.max(2, Math.min(14, Math.floor(720 / ND))) + "px");
    rows.append(neuron_row("q", q), neuron_row("k", kk), neuron_row("q×k", prod));
    $("neuron-sum").textContent = "q·k = " + dot.toPrecision(5) + "; × scale " +
      meta.neuron.scale.toPrecision(4) + " = " + (dot * meta.neuron.scale).toPrecision(5) +
      " (the score before the softcap and the biases); weight " + fmt(weight(k, i, j));
    Object.assign(sec.dataset, { head: String(meta.heads[k]), query: String(i), key: String(j), dot: String(dot) });
  }

  // The token whose lines are drawn: the one under the pointer, else the pinned one.
  const active = () => state.hover || state.pinned;
  const kLinesPerHead = 6, kLinesOneHead = 24;
  function draw_lines() {
    list_top_keys();
    draw_neuron();
    const w = parseFloat(lines.style.width);
    lctx.clearRect(0, 0, lines.width, lines.height);
    lines.dataset.drawn = "0";
    for (const b of bars) b.style.width = "0";
    for (const t of qtoks.concat(ktoks)) t.classList.remove("hot", "pinned");
    if (state.pinned) (state.pinned.side === "q" ? qtoks : ktoks)[state.pinned.t].classList.add("pinned");
    const a = active();
    if (!a) return;
    (a.side === "q" ? qtoks : ktoks)[a.t].classList.add("hot");
    const heads = chosen();
    const y = (t) => t * row + row / 2;
    // The other side's tokens: keys of a query's row, or queries of a key's column.
    const M = a.side === "q" ? NK : NQ;
    const at = (k, t) => (a.side === "q" ? weight(k, a.t, t) : weight(k, t, a.t));
    // Lines and bars are relative to the strongest weight of this token's
    // row (or column) over the heads shown: long rows spread ~1/S each.
    let top = 0;
    for (const k of heads) for (let t = 0; t < M; t++) top = Math.max(top, at(k, t));
    if (!(top > 0)) return;
    lctx.lineCap = "round";
    // Each head's strongest few lines (kLinesPerHead with several heads,
    // kLinesOneHead with one): past a few dozen tokens every line drawn
    // would make a wall; the bars still give every token's weight.
    const most = heads.length > 1 ? kLinesPerHead : kLinesOneHead;
    let drawn_lines = 0;
    for (const k of heads) {
      lctx.strokeStyle = heads.length === 1 ? "#1f77b4" : head_colour(k);
      const order = Array.from({ length: M }, (_, t) => t);
      if (M > most) order.sort((p, q) => at(k, q) - at(k, p) || p - q).length = most;
      for (const t of order) {
        const s = at(k, t) / top;
        if (s < 0.02) continue;  // faint lines would only grey the picture
        drawn_lines++;
        lctx.globalAlpha = s;
        lctx.lineWidth = 0.5 + 2.5 * s;
        lctx.beginPath();
        lctx.moveTo(0, a.side === "q" ? y(a.t) : y(t));
        lctx.lineTo(w, a.side === "q" ? y(t) : y(a.t));
        lctx.stroke();
      }
    }
    lctx.globalAlpha = 1;
    lines.dataset.drawn = String(drawn_lines);  // for the tests
    if (a.side === "q")  // bars: the weight of each key (the max over the heads shown)
      for (let t = 0; t < NK; t++) {
        let v = 0;
        for (const k of heads) v = Math.max(v, at(k, t));
        bars[t].style.width = (100 * v) / top + "%";
      }
  }
  // The pinned (or hovered) query's strongest keys per head shown, as a
  // table beside the head view: key index, token, weight. Past 1,024 tokens
  // a cell holds a block of keys, and the page has each query cell's
  // strongest keys named exactly (meta.top_keys; with a block of queries,
  // each key's largest weight over them); without it, the cells' ranges.
  const kTopKeys = 10;
  const exact_top = meta.top_keys || null;
  // [[key number, token, weight]] of drawn head k at query cell t.
  const exact_keys = (k, t) => {
    const per = exact_top.per_cell, out = [];
    for (let i = 0; i < per; ++i) {
      const at = (k * NQ + t) * per + i, j = exact_top.keys[at];
      if (j >= 0) out.push([String(j), exact_top.labels[String(j)] || "", exact_top.weights[at]]);
    }
    return out;
  };
  const key_range = (j) => {
    if (NK === meta.T) return String(j);
    const t0 = Math.ceil((j * meta.T) / NK), t1 = Math.ceil(((j + 1) * meta.T) / NK) - 1;
    return t1 > t0 ? t0 + "\u2013" + t1 : String(t0);
  };
  function list_top_keys() {
    const box = $("topkeys-list");
    box.textContent = "";
    const a = active();
    if (!a || a.side !== "q") {
      $("topkeys-title").textContent = "Top keys: pin a query";
      return;
    }
    $("topkeys-title").textContent = "Top keys of query " + (NQ === meta.L ? a.t + " " : "") + quote(a.t);
    for (const k of chosen()) {
      const table = el("table"), cap = el("caption"), head = el("tr");
      table.dataset.topkeysOf = String(meta.heads[k]);
      cap.textContent = head_name(k) + row_sum_note(k, a.t);
      const one_key = NK === meta.T || exact_top, one_query = NQ === meta.L;
      for (const [text, cls] of [[one_key ? "key" : "keys", "num"], ["token", ""], [one_key && one_query ? "weight" : "max weight", "num"]]) {
        const th = el("th", cls);
        th.textContent = text;
        head.append(th);
      }
      table.append(cap, head);
      if (exact_top) {
        for (const [key, tok, w] of exact_keys(k, a.t)) {
          const tr = el("tr");
          tr.dataset.key = key;
          for (const [text, cls] of [[key, "num"], [tok === key ? "" : tok, "tok"], [fmt(w), "num"]]) {
            const td = el("td", cls);
            td.textContent = text;
            tr.append(td);
          }
          table.append(tr);
        }
        box.append(table);
        continue;
      }
      const order = Array.from({ length: NK }, (_, j) => j).filter((j) => weight(k, a.t, j) > 0);
      order.sort((p, q) => weight(k, a.t, q) - weight(k, a.t, p) || p - q);
      for (const j of order.slice(0, kTopKeys)) {
        const tr = el("tr");
        tr.dataset.key = String(j);
        // A block's label is "3488 [3488-3491]": its token part only, none when that is the index.
        let tok = meta.key_labels[j];
        if (NK !== meta.T) {
          tok = tok.replace(/ \[[^\]]*\]$/, "");
          if (tok === key_range(j).split("\u2013")[0]) tok = "";
        }
        const cells = [[key_range(j), "num"], [tok, "tok"], [fmt(weight(k, a.t, j)), "num"]];
        for (const [text, cls] of cells) {
          const td = el("td", cls);
          td.textContent = text;
          tr.append(td);
        }
        table.append(tr);
      }
      box.append(table);
    }
  }
  let queued = false;
  const redraw = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      draw_lines();
    });
  };

  // The sum of a query's row when it falls short of 1 (attention sinks take
  // the rest; a fully masked row sums to 0): "" otherwise, or for rows of
  // blocks of keys, whose cells are maxima.
  function row_sum_note(k, i) {
    if (NK !== meta.T || NQ !== meta.L) return "";
    let sum = 0;
    for (let j = 0; j < NK; j++) sum += weight(k, i, j);
    if (!(sum < 0.999)) return "";
    return " (row sums to " + sum.toFixed(3) + (sum > 0 && meta.sinks ? ": the sink takes the rest)" : ")");
  }
  function token_tip(side, t) {
    const heads = chosen();
    const p = state.pinned && state.pinned.side === "q" && side === "k" ? state.pinned.t : null;
    const name = (s, u) => (s === "q" ? "query " + u + " " + quote(u) : "key " + u + " " + kquote(u));
    const lines_ = [];
    if (p !== null) {
      lines_.push(name("q", p) + " \u2192 " + name("k", t));
      for (const k of heads) lines_.push(head_name(k) + ": " + fmt(weight(k, p, t)));
    } else {
      lines_.push(name(side, t) + ", strongest " + (side === "q" ? "key" : "query") + ":");
      const M = side === "q" ? NK : NQ;
      const at = (k, u) => (side === "q" ? weight(k, t, u) : weight(k, u, t));
      for (const k of heads) {
        let best = 0;
        for (let u = 1; u < M; u++) if (at(k, u) > at(k, best)) best = u;
        lines_.push(head_name(k) + ": " + (side === "q" ? kquote(best) : quote(best)) + " (" + best + ") " +
                    fmt(at(k, best)) + (side === "q" ? row_sum_note(k, t) : ""));
      }
    }
    return lines_.slice(0, 17).join("\n") + (lines_.length > 17 ? "\n\u2026" : "");
  }
  function status() {
    const p = state.pinned;
    $("status").textContent = p
      ? "Pinned " + (p.side === "q" ? (NQ === meta.L ? "query " + p.t + " " : "queries ") + quote(p.t)
                                     : (NK === meta.T ? "key " + p.t + " " : "keys ") + kquote(p.t)) + "; click it again to unpin."
      : "Hover a token to see where it attends (lines: weight relative to the strongest); click to pin it.";
  }
  function pin(side, t) {
    state.pinned = state.pinned && state.pinned.side === side && state.pinned.t === t ? null : { side, t };
    status();
    mark_rows();
    redraw();
  }
  for (const [side, toks] of [["q", qtoks], ["k", ktoks]])
    toks.forEach((e, t) => {
      e.onmouseenter = (ev) => {
        if (!(state.pinned && side === "k" && state.pinned.side === "q")) state.hover = { side, t };
        else state.key = t;  // a key of the pinned query: the neuron view's
        show_tip(token_tip(side, t), ev);
        redraw();
      };
      e.onmousemove = (ev) => show_tip(tip.textContent, ev);
      e.onmouseleave = () => {
        state.hover = null;
        hide_tip();
        redraw();
      };
      e.onclick = () => {
        if (side === "q") state.key = null;
        pin(side, t);
      };
    });

  // ---- Heatmaps, one panel per head: drawn when first shown.
  // The labels along one axis of a heatmap (n cells of `tokens` tokens), as
  // the PNG draws them: every token's label up to 64 cells, past that ticks
  // at round steps (1, 2 or 5 times a power of ten) naming the first token of
  // their cell. Each sits at its cell's centre (a percentage of the axis).
  function tick_labels(cls, labels, n, tokens) {
    const box = el("div", "ticks " + cls);
    const every = n <= 64;
    let step = 1;
    if (!every) {
      const raw = n / 12, p = Math.pow(10, Math.floor(Math.log10(raw)));
      step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
    }
    let widest = 0;
    box.dataset.n = String(n);
    for (let i = 0; i < n; i += step) {
      const t = el("span");
      t.textContent = every ? labels[i] : String(Math.ceil((i * tokens) / n));
      t.dataset.i = String(i);
      t.style.setProperty("--at", (100 * (i + 0.5)) / n + "%");
      widest = Math.max(widest, t.textContent.length);
      box.append(t);
    }
    // Row labels take the room their longest needs (up to 12 characters).
    if (cls === "rlab") box.style.width = Math.min(12, widest) * 0.62 + 0.8 + "em";
    box.dataset.widest = String(widest);
    return box;
  }
  const scale = Math.max(1, Math.floor(512 / N));  // canvas px per cell: room for hatching
  // Square cells, but a panel no flatter than 8:1 and no taller than 1:2.
  const aspect = Math.min(8, Math.max(0.5, NK / NQ));
  const panels = [], marks = [];
  let drawn = false;
  meta.heads.forEach((h, k) => {
    const fig = el("figure", "panel"), cap = el("figcaption"), box = el("div", "box");
    const cv = el("canvas"), mark = el("div", "rowmark");
    fig.dataset.head = String(h);
    cap.textContent = head_name(k);
    cv.width = NK * scale;
    cv.height = NQ * scale;
    if (NQ !== NK) box.style.aspectRatio = String(aspect);
    mark.hidden = true;
    box.append(cv, mark);
    const qaxis = el("div", "axis q"), kaxis = el("div", "axis k");
    qaxis.textContent = "query";
    kaxis.textContent = "key";
    fig.append(cap, qaxis, tick_labels("rlab", meta.labels, NQ, meta.L), box,
               tick_labels("klab", meta.key_labels, NK, meta.T), kaxis);
    const cell = (ev) => {
      const r = cv.getBoundingClientRect();
      const i = Math.floor(((ev.clientY - r.top) / r.height) * NQ), j = Math.floor(((ev.clientX - r.left) / r.width) * NK);
      return [Math.min(NQ - 1, Math.max(0, i)), Math.min(NK - 1, Math.max(0, j))];
    };
    cv.onmousemove = (ev) => {
      const [i, j] = cell(ev);
      show_tip(head_name(k) + "\nquery " + i + " " + quote(i) + "\nkey " + j + " " + kquote(j) + "\nweight " + fmt(weight(k, i, j)), ev);
    };
    cv.onmouseleave = hide_tip;
    cv.onclick = (ev) => {  // pins the query; the neuron view shows this key
      const [i, j] = cell(ev);
      state.key = j;
      if (state.pinned && state.pinned.side === "q" && state.pinned.t === i) redraw();
      else pin("q", i);
    };
    panels.push(fig);
    marks.push(mark);
    $("grid").append(fig);
  });
  // Every label that fits: a small panel (all heads) shows every 2nd, 5th...
  // label so that none overlaps, a large one (one head) every label.
  function thin_labels() {
    for (const box of document.querySelectorAll(".ticks")) {
      const n = Number(box.dataset.n), keys = box.classList.contains("klab");
      const px = keys ? box.clientWidth : box.clientHeight;
      if (!(px > 0)) continue;
      // Rows need a line's height; key labels their width, or they stand
      // upright (as in the PNG) and need a line's height.
      const flat_need = 6.5 * Number(box.dataset.widest) + 4;
      const upright = keys && px / n < flat_need;
      box.classList.toggle("upright", upright);
      const need = keys && !upright ? flat_need : 12;
      let step = 1;
      for (let p = 1; (px / n) * step < need; p *= 10)
        step = [1, 2, 5].map((m) => m * p).find((s) => (px / n) * s >= need) || 10 * p;
      for (const t of box.children) t.hidden = n <= 64 && Number(t.dataset.i) % step !== 0;
    }
  }
  function draw_maps() {
    thin_labels();
    if (drawn) return;
    drawn = true;
    const w = NK * scale, h = NQ * scale;
    panels.forEach((fig, k) => {
      const cv = fig.querySelector("canvas"), ctx = cv.getContext("2d");
      const img = ctx.createImageData(w, h), px = new Uint32Array(img.data.buffer);
      const lut = lut_of(k);
      for (let y = 0; y < h; y++) {
        const i = (y / scale) | 0;
        for (let x = 0; x < w; x++) {
          const c = code(k, i, (x / scale) | 0);
          px[y * w + x] = c === 0 ? hatch[((x + y) >> 1) % 3 === 0 ? 0 : 1] : lut[c];
        }
      }
      ctx.putImageData(img, 0, 0);
    });
  }
  function mark_rows() {
    const p = state.pinned;
    marks.forEach((m) => {
      m.hidden = !(p && p.side === "q");
      if (p && p.side === "q") {
        m.style.top = (100 * p.t) / NQ + "%";
        m.style.height = Math.max(100 / NQ, 0.4) + "%";
      }
    });
  }

  // ---- Controls.
  function set_view(v) {
    state.view = v;
    $("heads-view").hidden = v !== "heads";
    $("maps-view").hidden = v !== "maps";
    $("view-heads").classList.toggle("on", v === "heads");
    $("view-maps").classList.toggle("on", v === "maps");
    if (v === "maps") {
      draw_maps();
    } else {
      size_lines();
      redraw();
      // A query pinned on a heatmap (or by the address) is brought into view.
      const p = state.pinned;
      if (p) hv.scrollTop = Math.max(0, p.t * row + row / 2 - hv.clientHeight / 2);
    }
  }
  function set_head(v) {
    state.head = v;
    select.value = v;
    chips.hidden = v !== "all";
    panels.forEach((p, k) => (p.hidden = v !== "all" && Number(v) !== k));
    $("grid").style.setProperty("--panel", v === "all" ? "300px" : "min(90vw, 720px)");
    if (state.view === "maps") thin_labels();
    redraw();
  }
  select.onchange = () => set_head(select.value);
  $("view-heads").onclick = () => set_view("heads");
  $("view-maps").onclick = () => set_view("maps");
  addEventListener("resize", () => {
    if (state.view === "heads") size_lines(), redraw();
    else thin_labels();
  });
  set_head(state.head);
  // The address can choose the view and pin a query: page.html#maps, #pin=5.
  // Otherwise the last query starts pinned (as --show's head view), so the
  // head view opens with lines drawn rather than empty.
  // #pin=N is query token N at any length: past kMaxPageCells tokens a cell
  // holds a block of them (cell floor(N * NQ / L), as the capture groups them).
  // #pin=N,key=M also picks the neuron view's key.
  const pinned = /^#pin=(\d+)(?:,key=(\d+))?$/.exec(location.hash);
  const token_cell = (t) => Math.floor((Math.min(meta.L - 1, t) * NQ) / meta.L);
  if (pinned && pinned[2] !== undefined) state.key = Math.min(NK - 1, Number(pinned[2]));
  pin("q", pinned ? token_cell(Number(pinned[1])) : NQ - 1);
  set_view(location.hash === "#maps" ? "maps" : "heads");
  // The first lines and bars are drawn now, in either view, not on the next
  // animation frame (redraw): the page is complete when its script ends. A
  // reader of the DOM right after the load event (chromium --dump-dom, the
  // tests) may otherwise come before the first frame, as it did under load
  // with #maps, whose head view is drawn while hidden.
  if (state.view !== "heads") size_lines();
  draw_lines();
  document.body.dataset.ready = "1";
  document.body.dataset.setupMs = String(Math.round(performance.now() - t0));  // for the README's figures
})();
