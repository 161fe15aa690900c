/*
 * Exact coins (DESIGN.md, "The mechanisms"): below(n) by rejection sampling from
 * crypto.getRandomValues, Bernoulli(a/b) as below(b) < a, in BigInts from the server's
 * "a/b"; no Math.random, no floats. Each mechanisms/*.js registers its sampler here.
 */
(function () {
  "use strict";

  // Uniform in [0, n), n a BigInt >= 1: draw just enough bits, retry if >= n.
  function below(n) {
    if (n <= 1n) return 0n;
    const bits = (n - 1n).toString(2).length;
    const bytes = new Uint8Array((bits + 7) >> 3);
    const mask = 0xff >> (bytes.length * 8 - bits);
    for (;;) {
      window.crypto.getRandomValues(bytes);
      bytes[0] &= mask;
      let v = 0n;
      for (const b of bytes) v = (v << 8n) | BigInt(b);
      if (v < n) return v;
    }
  }

  const bern = (a, b) => below(b) < a;

  // "a/b" in [0, 1] (any: [0, inf)) as [a, b] BigInts.
  function rational(text, any) {
    const m = /^(\d+)\/(\d+)$/.exec(String(text));
    if (!m) throw new Error("not a rational: " + text);
    const a = BigInt(m[1]), b = BigInt(m[2]);
    if (b === 0n || (!any && a > b)) throw new Error("bad rational: " + text);
    return [a, b];
  }

  function integer(value, lo, hi) {
    const s = String(value).trim();
    if (!/^-?\d+$/.test(s)) throw new Error("not an integer: " + value);
    const x = BigInt(s);
    if (x < BigInt(lo) || x > BigInt(hi)) throw new Error("out of range: " + value);
    return x;
  }

  function pad(number) { // 17 chars: "-" or "0", then 16 digits
    const x = integer(number, -(10n ** 15n), 10n ** 15n), d = (x < 0n ? -x : x).toString();
    return x < 0n ? "-" + d.padStart(16, "0") : d.padStart(17, "0");
  }

  const mechanisms = new Map();

  function register(name, mechanism) { // once: the audit, loading all, tests what pages load
    if (mechanisms.has(name)) throw new Error("registered twice: " + name);
    mechanisms.set(name, { fromWire: (p, v) => v, toWire: (p, r) => String(r), ...mechanism });
  }

  function find(p) {
    const m = mechanisms.get(p && p.mechanism);
    if (!m) throw new Error("no module for " + (p && p.mechanism));
    return m;
  }

  const randomize = (p, value) => find(p).sample(p, value);

  function wire(p, posted) { // a posted value's report, posted alike
    const m = find(p);
    return m.toWire(p, m.sample(p, m.fromWire(p, posted)));
  }

  const has = (name) => mechanisms.has(name);
  window.surveyRandomizer = Object.freeze({
    below, bern, rational, integer, pad, register, has, randomize, wire,
  });
})();
