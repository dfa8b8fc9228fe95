// The course page's "Try it" panel and its API (window.gptLecture), on the engine (engine.js) and the visual
// language exported from scenes/style.py (data.js: colour scales, percentage and signed formats, 1-based layers).
"use strict";
(function () {
  const E = window.GPTEngine, S = window.GPT_LECTURE_DATA.style, cfg = E.config;
  const TOP_WORDS = 8, TOP_NEURONS = 8, LENS_WORDS = 3;

  // --- the visual language (scenes/style.py) ---
  // x rounded to `decimals` as Python's format does: the binary value's exact decimals, a tie to the even digit.
  function fixed(x, decimals) {
    let s = x.toFixed(decimals);
    const exact = Math.abs(x).toFixed(100).replace(/0+$/, ""), point = exact.indexOf(".");
    if (point >= 0 && exact.length === point + decimals + 2 && exact.endsWith("5")) {   // an exact tie
      const down = (Math.trunc(Math.abs(x) * 10 ** decimals) / 10 ** decimals).toFixed(decimals);
      const lastDigit = Number(down[down.length - 1]);
      if (lastDigit % 2 === 0) s = (x < 0 ? "-" : "") + down;
    }
    return s;
  }
  function percent(p) {   // style.percent
    const r = S.percent;
    if (p === 0) return r.zero;
    if (p < r.tinyBelow) return r.tiny;
    if (p >= r.nearFrom && p < r.nearBelow) return r.near;
    return fixed(100 * p, r.decimals) + "%";
  }
  function signed(x) {   // style.signed
    let s = fixed(x, S.signed.decimals);
    if (Number(s) === 0) s = fixed(0, S.signed.decimals);
    else if (x > 0 || !s.startsWith("-")) s = S.signed.plus + s;
    return s.replace("-", S.signed.minus);
  }
  const shown = i => i + S.shownOffset;   // style.shown: layers and heads counted from 1 on screen
  const label = w => (w === window.GPT_LECTURE_DATA.eos ? S.eosLabel : w);   // style.token_label
  function rgb(hex) { return [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16)); }
  function mix([a, b], t) {   // a scale's colour at t in [0, 1] (manim's interpolate_color: linear in RGB)
    t = Math.min(Math.max(t, 0), 1);
    const [x, y] = [rgb(a), rgb(b)];
    return "#" + x.map((v, i) => Math.round(v + (y[i] - v) * t).toString(16).padStart(2, "0")).join("").toUpperCase();
  }
  const attentionColour = w => mix(S.scales.attention, w);
  // WCAG 2.1's contrast ratio of two colours (relative luminance of sRGB), and a text colour for a background chosen
  // by it: the first of `preferred` that reaches 4.5:1 (1.4.3), else the one of them with the most contrast, else
  // black or white, whichever has more.
  const MIN_CONTRAST = 4.5, PANEL = "#111111";
  function luminance(hex) {
    const [r, g, b] = rgb(hex).map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  function contrast(a, b) {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  }
  function textOn(background, preferred) {
    const ok = preferred.find(c => contrast(c, background) >= MIN_CONTRAST);
    if (ok) return ok;
    return ["#FFFFFF", "#000000", ...preferred].sort((a, b) => contrast(b, background) - contrast(a, background))[0];
  }
  const cellText = background => textOn(background, [S.colours.text, S.colours.background].sort(
    (a, b) => contrast(b, background) - contrast(a, background)));
  // a token's colour is its id's, as in the video (style.token_colours): the palette dealt in the order the prompt's
  // distinct tokens first appear, so the same word keeps one colour
  const tokenColour = t => {
    const ids = Array.from(state.ids), first = [...new Set(ids)];
    return S.tokenPalette[first.indexOf(ids[t]) % S.tokenPalette.length];
  };

  // --- the page API ---
  function trace(prompt) {
    return new Promise(resolve => {
      const t = E.fullTrace(prompt);
      resolve({tokens: t.tokens, token_ids: t.token_ids, logits: E.toRows(t.logits),
               attention: t.layers.map(l => l.attn.weights)});
    });
  }
  window.gptLecture = {trace, probabilities: (row, temperature = 1.0) => E.probabilities(row, temperature),
                       split: E.split, encode: E.encode, percent, signed, attentionColour, contrast, open: null};

  // --- the panel ---
  const root = document.getElementById("try");
  if (!root) return;
  const $ = sel => root.querySelector(sel);
  const ui = () => JSON.parse(document.getElementById("course-data").textContent).ui[document.documentElement.lang] ||
                   JSON.parse(document.getElementById("course-data").textContent).ui.en;
  const fill = (s, values) => s.replace(/\{(\w+)\}/g, (_, k) => values[k]);
  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "style") Object.assign(e.style, v);
      else if (k === "dataset") Object.assign(e.dataset, v);
      else if (k in e && k !== "list") e[k] = v;
      else e.setAttribute(k, v);
    }
    e.append(...children.filter(c => c !== null && c !== undefined));
    return e;
  }

  // The command line's message in the page's language: the engine's kind and values, worded by the page's strings.
  function message(e) {
    const u = ui();
    if (!e.kind || !u[e.kind]) return e.message;
    const v = e.values || {};
    const hint = v.close && v.close.length ? fill(u.err_hint, {words: v.close.join(", ")}) : "";
    return fill(u[e.kind], {...v, hint});
  }
  function announce(text) {   // the panel's polite live region: results, read once the learner pauses
    const status = $(".try-status");
    status.textContent = "";
    setTimeout(() => { status.textContent = text; }, 50);
  }

  const state = {trace: null, ids: null, prompt: "", position: 0, layer: 0, head: 0, rng: null, steps: []};

  function run(prompt, opts = {}) {
    const error = $(".try-error");
    let t;
    try {
      t = E.fullTrace(typeof prompt === "string" ? prompt : prompt);
    } catch (e) {
      if (!(e instanceof E.ModelError)) throw e;
      error.textContent = message(e);
      error.hidden = false;
      return false;
    }
    error.hidden = true;
    error.textContent = "";
    state.trace = t;
    state.ids = t.token_ids;
    if (typeof prompt === "string") { state.prompt = prompt; state.steps = []; state.rng = null; }
    const T = t.token_ids.length;
    state.position = Number.isInteger(opts.position) && opts.position >= 0 && opts.position < T ? opts.position : T - 1;
    if (Number.isInteger(opts.layer) && opts.layer >= 0 && opts.layer < cfg.n_layer) state.layer = opts.layer;
    if (Number.isInteger(opts.head) && opts.head >= 0 && opts.head < cfg.n_head) state.head = opts.head;
    draw();
    if (opts.announce !== false) announceNext();
    return true;
  }

  function announceNext() {
    const p = distribution(), top = E.order(p).slice(0, 3);
    announce(fill(ui().status_next, {words: top.map(i => `“${label(E.words[i])}” ${percent(p[i])}`).join(", ")}));
  }

  function temperature() { return Number($(".try-temperature").value); }

  function drawTokens() {
    const box = $(".try-tokens");
    const focused = box.contains(document.activeElement) ? [...box.children].indexOf(document.activeElement) : -1;
    box.replaceChildren(...state.trace.tokens.map((w, t) => el("button", {
      type: "button", className: "try-token" + (t === state.position ? " current" : ""), textContent: label(w),
      title: `${ui().position} ${t}`, "aria-pressed": String(t === state.position), style: {borderColor: tokenColour(t)},
      onclick: () => {
        state.position = t; draw();
        announce(fill(ui().status_position, {t, token: label(w),
                                              predicted: fill(ui().predicted, {word: label(E.words[predicted(t)])})}));
      }})));
    // The learner's focus stays on the token they pressed (the buttons are drawn anew).
    if (focused >= 0 && box.children[focused]) box.children[focused].focus();
  }

  function bars(rows, colour) {   // [{word, p}] as labelled bars, the percentage format of the video
    return el("ol", {className: "try-bars"}, ...rows.map(r => el("li", {},
      el("span", {className: "w", textContent: label(r.word)}),
      el("span", {className: "bar"}, el("span", {style: {width: (100 * r.p) + "%", background: colour}})),
      el("span", {className: "p", textContent: percent(r.p)}))));
  }

  function distribution() {   // next word after the last token, at the slider's temperature
    const logits = Array.from(E.row(state.trace.logits, state.ids.length - 1));
    return E.probabilities(logits, temperature());
  }

  function drawNext() {
    const p = distribution(), top = E.order(p).slice(0, TOP_WORDS);
    $(".try-temperature-value").textContent = fixed(temperature(), 2);
    $(".try-next").replaceChildren(bars(top.map(i => ({word: E.words[i], p: p[i]})), S.colours.prob));
  }

  // As the video draws it (style.ATTENTION: "keys ↓", "queries →"): a row per key, a column per query; the cell of
  // key k and query q is q's weight on k, masked (−∞ before the softmax) when the key comes after the query.
  function drawAttention() {
    const w = state.trace.layers[state.layer].attn.weights[state.head], toks = state.trace.tokens, T = toks.length;
    const table = el("table", {className: "try-grid"});
    const top = el("tr", {}, el("th", {className: "axis", textContent: S.attention.keys_axis[lang()] + "  " +
                                        S.attention.queries_axis[lang()]}));
    toks.forEach((t, q) => top.append(el("th", {scope: "col", className: q === state.position ? "current" : "",
                                                textContent: label(t), style: {color: textOn(PANEL, [tokenColour(q)])}})));
    table.append(top);
    for (let k = 0; k < T; k++) {
      const tr = el("tr", {}, el("th", {scope: "row", textContent: label(toks[k]),
                                        style: {color: textOn(PANEL, [tokenColour(k)])}}));
      for (let q = 0; q < T; q++) {
        tr.append(el("td", k > q
          ? {className: "masked", textContent: S.maskText, title: S.attention.masked[lang()],
             style: {background: S.colours.masked, color: textOn(S.colours.masked, [S.colours.mask_accent,
                                                                                      cellText(S.colours.masked)])}}
          : {className: q === state.position ? "current" : "", textContent: percent(w[q][k]),
             dataset: {query: q, key: k}, style: {background: attentionColour(w[q][k]),
             color: cellText(attentionColour(w[q][k]))}}));
      }
      table.append(tr);
    }
    const box = $(".try-attention");
    box.replaceChildren(table);
    const focus = table.querySelector("th.current");   // the focus query's column in view
    if (focus && focus.offsetLeft + focus.offsetWidth > box.clientWidth) {
      box.scrollLeft = focus.offsetLeft + focus.offsetWidth - box.clientWidth;
    }
  }

  function predicted(position) {   // the word the model predicts after `position` (T = 0: its argmax)
    return E.order(E.probabilities(Array.from(E.row(state.trace.logits, position)), 0))[0];
  }

  function drawLens() {
    const u = ui(), target = predicted(state.position);
    const rows = E.logitLens(state.trace, state.position).map(pt => {
      const name = pt.part === "embeddings" ? u.lens_embeddings
        : fill(pt.part === "attn" ? u.lens_attn : u.lens_mlp, {l: shown(pt.layer)});
      const top = E.order(pt.probabilities).slice(0, LENS_WORDS);
      return el("tr", {}, el("th", {scope: "row", textContent: name}),
        ...top.map(i => el("td", {className: i === target ? "hit" : ""},
          el("span", {className: "w", textContent: label(E.words[i])}), " ",
          el("span", {className: "p", textContent: percent(pt.probabilities[i])}))),
        el("td", {className: "target"}, el("div", {}, el("span", {className: "bar"}, el("span", {style: {
          width: 100 * pt.probabilities[target] + "%", background: S.colours.prob}})),
          el("span", {className: "p", textContent: percent(pt.probabilities[target])}))));
    });
    const head = el("tr", {}, el("th", {scope: "col", textContent: u.lens_where}),
                    el("th", {scope: "colgroup", colSpan: LENS_WORDS, textContent: u.lens_top}),
                    el("th", {scope: "col", textContent: fill(u.lens_target, {word: label(E.words[target])})}));
    $(".try-lens").replaceChildren(el("p", {className: "note", textContent: fill(u.predicted, {word: label(E.words[target])})}),
                                   el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows)));
  }

  function drawNeurons() {
    const u = ui(), target = predicted(state.position);
    const rows = E.neuronPushes(state.trace, state.position, target).sort((a, b) => b.push - a.push).slice(0, TOP_NEURONS);
    const limit = Math.max(...rows.map(r => Math.abs(r.push)), 1e-12);
    $(".try-neurons").replaceChildren(
      el("p", {className: "note", textContent: fill(u.predicted, {word: label(E.words[target])})}),
      el("table", {}, el("thead", {}, el("tr", {}, el("th", {scope: "col", textContent: u.layer}),
                                   el("th", {scope: "col", textContent: u.neuron}),
                                   el("th", {scope: "col", textContent: u.activation}),
                                   el("th", {scope: "col", textContent: u.push}))),
        el("tbody", {}, ...rows.map(r => el("tr", {}, el("td", {textContent: fill(u.layer_n, {n: shown(r.layer)})}),
          el("td", {textContent: String(r.neuron)}),
          el("td", {className: "num", textContent: signed(r.activation)}),
          el("td", {className: "num push", textContent: signed(r.push), style: {background: mix(
            r.push >= 0 ? S.scales.positive : S.scales.negative, Math.abs(r.push) / limit),
            color: cellText(mix(r.push >= 0 ? S.scales.positive : S.scales.negative, Math.abs(r.push) / limit))}}))))));
  }

  function drawSteps() {
    const u = ui();
    $(".try-steps").replaceChildren(...state.steps.map(s => el("li", {textContent: s.u === null
      ? fill(u.argmax, {word: label(s.word), p: percent(s.p)})
      : fill(u.drawn, {u: s.u.toFixed(4), word: label(s.word), p: percent(s.p)})})));
    $(".try-generated").textContent = state.steps.length ? u.generated + ": " + state.trace.tokens.map(label).join(" ") : "";
  }

  function draw() {
    drawTokens(); drawNext(); drawAttention(); drawLens(); drawNeurons(); drawSteps();
    $(".try-layer").value = state.layer; $(".try-head").value = state.head;
  }

  // One step of model.generate: predict, draw u from the seeded stream (none at T = 0), append, predict again.
  function step() {
    if (!state.trace) return;
    if (state.ids.length >= cfg.n_positions) {
      $(".try-error").hidden = false;
      // model.generate's words; here every step's word is traced, so the context must hold it
      $(".try-error").textContent = fill(ui().err_steps, {prompt: state.ids.length - state.steps.length,
                                                          steps: state.steps.length + 1, max: cfg.n_positions});
      return;
    }
    const T = E.checkTemperature(temperature());
    if (!state.rng) state.rng = new E.Rng(Math.max(0, Math.floor(Number($(".try-seed").value) || 0)));
    const p = distribution(), u = T === 0 ? null : state.rng.random();
    const id = u === null ? E.order(p)[0] : E.sample(p, u);
    state.steps.push({u, word: E.words[id], p: p[id]});
    const steps = state.steps, rng = state.rng;
    run(state.ids.concat([id]), {layer: state.layer, head: state.head, announce: false});
    state.steps = steps; state.rng = rng;
    drawSteps();
    const items = $(".try-steps").children;
    announce(items[items.length - 1].textContent);
  }

  function lang() { return document.documentElement.lang in S.attention.masked ? document.documentElement.lang : "en"; }

  function build() {
    for (let l = 0; l < cfg.n_layer; l++) $(".try-layer").append(el("option", {value: l, textContent: String(shown(l))}));
    for (let h = 0; h < cfg.n_head; h++) $(".try-head").append(el("option", {value: h, textContent: String(shown(h))}));
    $(".try-form").addEventListener("submit", e => { e.preventDefault(); run($(".try-prompt").value); });
    // A new temperature or seed starts the draws again, from the prompt (model.generate's draws are one run).
    const restart = () => {
      if (state.steps.length) run(state.prompt);
      else if (state.trace) drawNext();
      state.rng = null;
    };
    $(".try-temperature").addEventListener("input", restart);
    $(".try-seed").addEventListener("change", restart);
    $(".try-layer").addEventListener("change", e => { state.layer = Number(e.target.value); drawAttention(); });
    $(".try-head").addEventListener("change", e => { state.head = Number(e.target.value); drawAttention(); });
    $(".try-draw").addEventListener("click", () => { run(state.prompt, {announce: false}); state.rng = null; step(); });
    $(".try-step").addEventListener("click", step);
    $(".try-reset").addEventListener("click", () => run(state.prompt));
    document.addEventListener("course:language", () => { if (state.trace) draw(); });
  }

  // Open the panel on given numbers (a clip's "try this scene's numbers"): prompt, layer, head, position, T, seed.
  function open(numbers, scroll = true) {
    const n = numbers || {};
    if (typeof n.temperature === "number") $(".try-temperature").value = n.temperature;
    if (Number.isInteger(n.seed)) $(".try-seed").value = n.seed;
    $(".try-prompt").value = n.prompt || "";
    run(n.prompt || "", {layer: n.layer, head: n.head, position: n.position, announce: scroll});
    if (scroll) {   // the learner's focus goes with the view: to the panel's heading, so Tab goes on in the panel
      root.scrollIntoView({behavior: "instant", block: "start"});
      $("#try-h").focus({preventScroll: true});
    }
  }
  window.gptLecture.open = open;

  build();
  document.querySelectorAll("button.try-scene").forEach(b => b.addEventListener("click", () => open(JSON.parse(b.dataset.try))));
  const first = document.querySelector(`.variant[data-variant="${document.documentElement.lang}"] button.try-scene`) ||
                document.querySelector("button.try-scene");
  open(first ? JSON.parse(first.dataset.try) : {prompt: root.dataset.prompt || ""}, false);
  window.gptLecture.firstAnswer = performance.now();
})();
