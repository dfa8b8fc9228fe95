// The shipped GPT in the course page: its tokenizer, its forward pass, its probabilities and its seeded sampler,
// written like model/numpy_gpt.py, model/tokenizer.py and model/generate.py (same names, the same equations).
// Row-vector convention as in GPT-2's code: a token's vector is a row, so Q = X @ W_q. Weights are stored in
// float32 (tryit/data.js, exported from model/weights at packaging time); the maths runs in float64 (JavaScript
// numbers), as the NumPy model's does.
"use strict";
(function (root) {
  const DATA = root.GPT_LECTURE_DATA;
  const cfg = DATA.config;
  const EOS = DATA.eos;

  // --- the weights: one base64 blob of little-endian float32, each tensor a view of it. Read as JavaScript numbers
  // (float64), so the maths is float64 on the stored float32 values, as in the NumPy model. ---
  function decodeWeights(blob, tensors) {
    let bytes;
    if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(blob);
    else {
      const text = atob(blob);
      bytes = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    }
    const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    const out = {};
    for (const [name, t] of Object.entries(tensors)) {
      out[name] = {shape: t.shape, data: all.subarray(t.offset, t.offset + t.size)};
    }
    return out;
  }
  const params = decodeWeights(DATA.weights, DATA.tensors);
  const p = name => params["transformer." + name];

  // --- small matrix helpers on {rows, cols, data: Float64Array} (row-major) ---
  function matrix(rows, cols, data) { return {rows, cols, data: data || new Float64Array(rows * cols)}; }
  function fromParam(t) { return t.shape.length === 1 ? matrix(1, t.shape[0], t.data) : matrix(t.shape[0], t.shape[1], t.data); }
  function row(M, i) { return M.data.subarray(i * M.cols, (i + 1) * M.cols); }
  // X @ W + b: X (T × d_in), W (d_in × d_out), b (d_out) or null
  function linear(X, W, b) {
    const T = X.rows, n = X.cols, m = W.cols, x = X.data, w = W.data, y = new Float64Array(T * m);
    for (let t = 0; t < T; t++) {
      const base = t * m;
      if (b) for (let j = 0; j < m; j++) y[base + j] = b.data[j];
      for (let i = 0; i < n; i++) {
        const xi = x[t * n + i], wi = i * m;
        for (let j = 0; j < m; j++) y[base + j] += xi * w[wi + j];
      }
    }
    return matrix(T, m, y);
  }
  function add(A, B) {
    const C = matrix(A.rows, A.cols);
    for (let i = 0; i < C.data.length; i++) C.data[i] = A.data[i] + B.data[i];
    return C;
  }
  function toRows(M) { return Array.from({length: M.rows}, (_, i) => Array.from(row(M, i))); }

  // --- the model's functions (numpy_gpt.py) ---
  function gelu(x) {   // GPT-2's GELU (tanh approximation, "gelu_new")
    return 0.5 * x * (1.0 + Math.tanh(Math.sqrt(2.0 / Math.PI) * (x + 0.044715 * x ** 3)));
  }

  function layerNorm(X, gain, bias, eps) {   // per row: (x − mean) / √(var + ε) · gain + bias
    const out = matrix(X.rows, X.cols), mean = [], variance = [];
    for (let t = 0; t < X.rows; t++) {
      const x = row(X, t), y = row(out, t);
      let m = 0;
      for (const v of x) m += v;
      m /= x.length;
      let s = 0;
      for (const v of x) s += (v - m) ** 2;
      s /= x.length;
      const scale = Math.sqrt(s + eps);
      for (let i = 0; i < x.length; i++) y[i] = (x[i] - m) / scale * gain.data[i] + bias.data[i];
      mean.push(m); variance.push(s);
    }
    return {mean, var: variance, out};
  }

  function softmax(z) {   // one row: shift by the max, e^z, divide by the sum
    let top = -Infinity;
    for (const v of z) if (v > top) top = v;
    const e = z.map(v => Math.exp(v - top));
    let sum = 0;
    for (const v of e) sum += v;
    return e.map(v => v / sum);
  }

  function checkTemperature(temperature) {
    const T = Number(temperature);
    if (typeof temperature === "boolean" || temperature === null || temperature === "" || !Number.isFinite(T) || T < 0) {
      throw new ModelError(`temperature must be a finite number >= 0, got ${temperature}`, "err_temperature",
                           {t: String(temperature)});
    }
    return T;
  }

  // softmax(logits / T) in float64. T = 0 is exactly the argmax (shared equally on a tie).
  function probabilities(logits, temperature = 1.0) {
    const T = checkTemperature(temperature);
    const z = Array.from(logits, Number);
    const top = Math.max(...z);
    if (T === 0) {
      const isMax = z.map(v => (v === top ? 1 : 0));
      const n = isMax.reduce((a, b) => a + b, 0);
      return isMax.map(v => v / n);
    }
    const e = z.map(v => Math.exp((v - top) / T));
    let sum = 0;
    for (const v of e) sum += v;
    return e.map(v => v / sum);
  }

  // --- the tokenizer (tokenizer.json: Lowercase, then the Chinese words cut out longest first, then Whitespace) ---
  // The command line's message (English), and its kind and values, so that a page can word it in its language.
  class ModelError extends Error {
    constructor(message, kind = null, values = {}) { super(message); this.kind = kind; this.values = values; }
  }
  const WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";   // the Rust regex's \w
  const WHITESPACE = new RegExp(`[${WORD}]+|[^${WORD}\\p{White_Space}]+`, "gu");   // tokenizers' Whitespace
  const vocab = new Map(DATA.words.map((w, i) => [w, i]));

  function preTokenize(text, steps) {
    let pieces = [text];
    for (const step of steps) {
      if (step.type === "Split") {   // behavior "Isolated": each match is a piece of its own, so is the text between
        const re = new RegExp(step.pattern, "gu");
        pieces = pieces.flatMap(s => {
          const out = [];
          let last = 0;
          for (const m of s.matchAll(re)) {
            if (m.index > last) out.push(s.slice(last, m.index));
            if (m[0]) out.push(m[0]);
            last = m.index + m[0].length;
          }
          if (last < s.length) out.push(s.slice(last));
          return out;
        });
      } else if (step.type === "Whitespace") {
        pieces = pieces.flatMap(s => s.match(WHITESPACE) || []);
      }
    }
    return pieces;
  }

  function split(text) { return preTokenize(String(text).toLowerCase(), DATA.preTokenizer); }

  // Python's repr of a str (the quotes the command line's message uses)
  function pyRepr(s) {
    const q = s.includes("'") && !s.includes('"') ? '"' : "'";
    let body = "";
    for (const ch of s) {
      if (ch === "\\" || ch === q) body += "\\" + ch;
      else if (ch === "\n") body += "\\n";
      else if (ch === "\r") body += "\\r";
      else if (ch === "\t") body += "\\t";
      else if (ch.codePointAt(0) < 0x20 || ch.codePointAt(0) === 0x7f) body += "\\x" + ch.codePointAt(0).toString(16).padStart(2, "0");
      else body += ch;
    }
    return q + body + q;
  }

  // difflib.SequenceMatcher(None, a, b).ratio(), as CPython computes it (autojunk on, no junk function)
  function ratio(a, b) {
    a = Array.from(a); b = Array.from(b);
    const b2j = new Map();
    b.forEach((ch, j) => { if (!b2j.has(ch)) b2j.set(ch, []); b2j.get(ch).push(j); });
    const n = b.length;
    if (n >= 200) {   // autojunk: a character of b that is too common is not indexed ("popular")
      const ntest = Math.floor(n / 100) + 1;
      for (const [ch, idx] of [...b2j]) if (idx.length > ntest) b2j.delete(ch);
    }
    function longest(alo, ahi, blo, bhi) {
      let besti = alo, bestj = blo, bestsize = 0, j2len = new Map();
      for (let i = alo; i < ahi; i++) {
        const newj2len = new Map();
        for (const j of b2j.get(a[i]) || []) {
          if (j < blo) continue;
          if (j >= bhi) break;
          const k = (j2len.get(j - 1) || 0) + 1;
          newj2len.set(j, k);
          if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
        }
        j2len = newj2len;
      }
      while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) { besti--; bestj--; bestsize++; }
      while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
      return [besti, bestj, bestsize];
    }
    let matches = 0;
    const queue = [[0, a.length, 0, b.length]];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = queue.pop();
      const [i, j, k] = longest(alo, ahi, blo, bhi);
      if (k) {
        matches += k;
        if (alo < i && blo < j) queue.push([alo, i, blo, j]);
        if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
      }
    }
    const total = a.length + b.length;
    return total ? 2.0 * matches / total : 1.0;
  }

  // difflib.get_close_matches(word, possibilities, n, cutoff): the n best ratios >= cutoff, best first
  function closeMatches(word, possibilities, n = 3, cutoff = 0.6) {
    const scored = [];
    for (const x of possibilities) {
      const r = ratio(x, word);
      if (r >= cutoff) scored.push([r, x]);
    }
    scored.sort((u, v) => (v[0] - u[0]) || (v[1] < u[1] ? -1 : v[1] > u[1] ? 1 : 0));
    return scored.slice(0, n).map(s => s[1]);
  }

  const isCJK = w => Array.from(w).some(ch => ch.codePointAt(0) > 0x7f);

  // WordTokenizer.encode: an unknown word or an over-long prompt is a ModelError worded as the command line's
  function encode(text, maxLen = cfg.n_positions) {
    const words = split(text);
    if (!words.length) throw new ModelError("the prompt is empty", "err_empty");
    for (const w of words) {
      if (!vocab.has(w) || w === EOS) {
        const others = DATA.words.filter(v => v !== EOS);
        let close = closeMatches(w, others, 3, 0.6);
        if (!close.length && isCJK(w)) close = others.filter(v => Array.from(v).some(ch => w.includes(ch))).slice(0, 3);
        const hint = close.length ? `; did you mean ${close.map(pyRepr).join(", ")}?` : "";
        throw new ModelError(`unknown word ${pyRepr(w)}: it is not in the model's ${DATA.words.length}-word vocabulary${hint}`,
                             "err_unknown", {word: pyRepr(w), n: DATA.words.length, close: close.map(pyRepr)});
      }
    }
    if (maxLen != null && words.length > maxLen) {
      throw new ModelError(`the prompt is ${words.length} tokens long, but the model's context is ${maxLen} tokens`,
                           "err_long", {n: words.length, max: maxLen});
    }
    return words.map(w => vocab.get(w));
  }

  // --- the forward pass (NumpyGPT.trace, block, attention, feed_forward) ---
  const dHead = cfg.n_embd / cfg.n_head;
  const W_E = fromParam(p("wte.weight"));     // vocabulary × d_model; the unembedding is its transpose (tied)
  const W_pos = fromParam(p("wpe.weight"));   // n_positions × d_model
  const P = name => fromParam(p(name));

  function attention(i, X) {
    const h = `h.${i}.attn.`, T = X.rows, H = cfg.n_head;
    const qkv = linear(X, P(h + "c_attn.weight"), P(h + "c_attn.bias"));   // T × 3·d_model: [Q | K | V]
    const d = cfg.n_embd;
    const at = (t, part, head, k) => qkv.data[t * 3 * d + part * d + head * dHead + k];
    const weights = [], scaledAll = [];
    const concat = matrix(T, d);
    for (let head = 0; head < H; head++) {
      const w = [], scaledRows = [];
      for (let q = 0; q < T; q++) {
        const scaled = [];
        for (let k = 0; k < T; k++) {
          let score = 0;
          for (let c = 0; c < dHead; c++) score += at(q, 0, head, c) * at(k, 1, head, c);
          scaled.push(score / Math.sqrt(dHead));
        }
        const masked = scaled.map((s, k) => (k > q ? -Infinity : s));   // a key after the query is masked
        w.push(softmax(masked));                                          // each query's row sums to 1
        scaledRows.push(scaled);
      }
      for (let q = 0; q < T; q++) {   // head_out = weights @ V, into the head's columns of concat
        for (let c = 0; c < dHead; c++) {
          let s = 0;
          for (let k = 0; k <= q; k++) s += w[q][k] * at(k, 2, head, c);
          concat.data[q * d + head * dHead + c] = s;
        }
      }
      weights.push(w); scaledAll.push(scaledRows);
    }
    const out = linear(concat, P(h + "c_proj.weight"), P(h + "c_proj.bias"));
    return {weights, scaled: scaledAll, concat, out};
  }

  function feedForward(i, X) {   // MLP(x) = GELU(x @ W_in + b_in) @ W_out + b_out
    const h = `h.${i}.mlp.`;
    const pre = linear(X, P(h + "c_fc.weight"), P(h + "c_fc.bias"));
    const act = matrix(pre.rows, pre.cols, pre.data.map(gelu));
    const out = linear(act, P(h + "c_proj.weight"), P(h + "c_proj.bias"));
    return {pre, act, out};
  }

  function block(i, x) {
    const h = `h.${i}.`, eps = cfg.layer_norm_epsilon;
    const layer = {resid_pre: x};
    layer.ln_1 = layerNorm(x, P(h + "ln_1.weight"), P(h + "ln_1.bias"), eps);
    layer.attn = attention(i, layer.ln_1.out);
    x = add(x, layer.attn.out);
    layer.resid_mid = x;
    layer.ln_2 = layerNorm(x, P(h + "ln_2.weight"), P(h + "ln_2.bias"), eps);
    layer.mlp = feedForward(i, layer.ln_2.out);
    x = add(x, layer.mlp.out);
    layer.resid_post = x;
    return [layer, x];
  }

  function unembed(X) {   // X @ W_Eᵀ
    const logits = matrix(X.rows, W_E.rows);
    for (let t = 0; t < X.rows; t++) {
      const x = row(X, t);
      for (let v = 0; v < W_E.rows; v++) {
        const e = row(W_E, v);
        let s = 0;
        for (let c = 0; c < x.length; c++) s += x[c] * e[c];
        logits.data[t * W_E.rows + v] = s;
      }
    }
    return logits;
  }

  // Every intermediate the panel draws. `prompt`: text, or a list of token ids.
  function fullTrace(prompt) {
    const ids = typeof prompt === "string" ? encode(prompt) : Array.from(prompt, Number);
    const bad = ids.find(i => !Number.isInteger(i) || i < 0 || i >= DATA.words.length);
    if (bad !== undefined) {
      throw new ModelError(`no token id ${bad}: the vocabulary has ${DATA.words.length} words`, "err_id",
                           {id: String(bad), n: DATA.words.length});
    }
    if (!ids.length || ids.length > cfg.n_positions) {
      throw new ModelError(`the prompt is ${ids.length} tokens long, but the model's context is ${cfg.n_positions} tokens`,
                           "err_long", {n: ids.length, max: cfg.n_positions});
    }
    const T = ids.length, d = cfg.n_embd;
    let x = matrix(T, d);
    ids.forEach((id, t) => { for (let c = 0; c < d; c++) x.data[t * d + c] = row(W_E, id)[c] + row(W_pos, t)[c]; });
    const trace = {tokens: ids.map(i => DATA.words[i]), token_ids: ids, embeddings: x, layers: []};
    for (let i = 0; i < cfg.n_layer; i++) {
      const [layer, next] = block(i, x);
      trace.layers.push(layer);
      x = next;
    }
    trace.ln_f = layerNorm(x, P("ln_f.weight"), P("ln_f.bias"), cfg.layer_norm_epsilon);
    trace.logits = unembed(trace.ln_f.out);
    return trace;
  }

  // The logit lens (model/analysis/lens.py): the stream at `position` after the embeddings, each attention and each
  // MLP, through the final LayerNorm (with that vector's own statistics) and the unembedding, then softmax.
  function logitLens(trace, position) {
    const points = [{part: "embeddings", layer: null, x: row(trace.embeddings, position)}];
    trace.layers.forEach((layer, l) => {
      points.push({part: "attn", layer: l, x: row(layer.resid_mid, position)});
      points.push({part: "mlp", layer: l, x: row(layer.resid_post, position)});
    });
    return points.map(({part, layer, x}) => {
      const ln = layerNorm(matrix(1, x.length, Float64Array.from(x)), P("ln_f.weight"), P("ln_f.bias"), cfg.layer_norm_epsilon);
      return {part, layer, probabilities: softmax(Array.from(row(unembed(ln.out), 0)))};
    });
  }

  // Each MLP neuron's direct push on one word's logit at `position` (model/analysis/mlp.py neuron_readout, times
  // the activation): act_i × (W_out row i through ln_f, its scale frozen at the real run's, then onto W_U[:, word]).
  function neuronPushes(trace, position, wordId) {
    const scale = Math.sqrt(trace.ln_f.var[position] + cfg.layer_norm_epsilon);
    const g = P("ln_f.weight").data, u = row(W_E, wordId);
    const rows = [];
    trace.layers.forEach((layer, l) => {
      const W_out = P(`h.${l}.mlp.c_proj.weight`), act = row(layer.mlp.act, position);
      for (let n = 0; n < W_out.rows; n++) {
        const w = row(W_out, n);
        let mean = 0;
        for (const v of w) mean += v;
        mean /= w.length;
        let perUnit = 0;
        for (let c = 0; c < w.length; c++) perUnit += (w[c] - mean) / scale * g[c] * u[c];
        rows.push({layer: l, neuron: n, activation: act[n], perUnit, push: act[n] * perUnit});
      }
    });
    return rows;
  }

  // --- the seeded sampler (model/generate.py): numpy.random.default_rng(seed).random(), i.e. SeedSequence -> PCG64 ---
  const M32 = 0xffffffffn, M64 = (1n << 64n) - 1n, M128 = (1n << 128n) - 1n;
  const mul32 = (a, b) => Math.imul(a, b) >>> 0;
  function seedSequenceState(seed, nWords64) {
    const INIT_A = 0x43b0d7e5, MULT_A = 0x931e8875, INIT_B = 0x8b51f9dd, MULT_B = 0x58f38ded;
    const MIX_MULT_L = 0xca01f9dd, MIX_MULT_R = 0x4973f715, XSHIFT = 16;
    const entropy = [];
    let s = BigInt(seed);
    do { entropy.push(Number(s & M32)); s >>= 32n; } while (s > 0n);
    let hashConst = INIT_A;
    const hashmix = value => {
      value = (value ^ hashConst) >>> 0;
      hashConst = mul32(hashConst, MULT_A);
      value = mul32(value, hashConst);
      return (value ^ (value >>> XSHIFT)) >>> 0;
    };
    const mix = (x, y) => {
      const r = (mul32(MIX_MULT_L, x) - mul32(MIX_MULT_R, y)) >>> 0;
      return (r ^ (r >>> XSHIFT)) >>> 0;
    };
    const pool = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
    for (let src = 0; src < 4; src++) for (let dst = 0; dst < 4; dst++) if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    for (let src = 4; src < entropy.length; src++) for (let dst = 0; dst < 4; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
    let hashB = INIT_B;
    const words = [];
    for (let i = 0; i < 2 * nWords64; i++) {
      let v = (pool[i % 4] ^ hashB) >>> 0;
      hashB = mul32(hashB, MULT_B);
      v = mul32(v, hashB);
      words.push((v ^ (v >>> XSHIFT)) >>> 0);
    }
    return Array.from({length: nWords64}, (_, k) => BigInt(words[2 * k]) | (BigInt(words[2 * k + 1]) << 32n));
  }

  class Rng {   // numpy.random.default_rng(seed): PCG64 (XSL-RR 128/64) seeded by SeedSequence(seed)
    constructor(seed) {
      if (!Number.isInteger(seed) || seed < 0) {
        throw new ModelError(`seed must be a whole number >= 0, got ${seed}`, "err_seed", {seed: String(seed)});
      }
      const v = seedSequenceState(seed, 4);
      this.mult = (2549297995355413924n << 64n) + 4865540595714422341n;
      this.inc = ((((v[2] << 64n) | v[3]) << 1n) | 1n) & M128;
      this.state = 0n;
      this.step();
      this.state = (this.state + ((v[0] << 64n) | v[1])) & M128;
      this.step();
    }
    step() { this.state = (this.state * this.mult + this.inc) & M128; }
    nextUint64() {
      this.step();
      const x = ((this.state >> 64n) ^ this.state) & M64, rot = this.state >> 122n;
      return ((x >> rot) | (x << ((64n - rot) & 63n))) & M64;
    }
    random() { return Number(this.nextUint64() >> 11n) * (1.0 / 9007199254740992.0); }
  }

  function order(pr) {   // token ids, most probable first; the lower id first on a tie
    return pr.map((v, i) => i).sort((a, b) => (pr[b] - pr[a]) || (a - b));
  }

  function sample(pr, u) {   // the token whose stretch of [0, 1) holds u, the words laid end to end in order(p)
    const ranked = order(pr);
    const cdf = [];
    let s = 0;
    for (const i of ranked) { s += pr[i]; cdf.push(s); }
    const target = u * cdf[cdf.length - 1];
    let k = cdf.findIndex(c => c > target);
    if (k < 0) k = cdf.length - 1;
    return ranked[k];
  }

  root.GPTEngine = {config: cfg, words: DATA.words, ModelError, split, encode, fullTrace, logitLens, neuronPushes,
                    probabilities, checkTemperature, softmax, order, sample, Rng, row, toRows};
})(typeof window !== "undefined" ? window : globalThis);
