/*
 * Local randomization in the browser (DESIGN.md, "The mechanisms").
 *
 * Every coin is exact: a random integer below n comes from crypto.getRandomValues
 * by rejection sampling (no modulo bias), and Bernoulli(a/b) is below(b) < a with
 * BigInt a/b parsed from the server's "a/b" strings. No Math.random, no floats.
 *
 * On submit of form[data-randomize="survey"], the questions named in its
 * data-design JSON are randomized with their parameters, plain questions are sent
 * as entered, skipped ones not at all; the result goes in a new form with the
 * hidden fields and randomized=client. The form filled in is never sent, and is
 * reset, so true answers never leave the page. Each value has one length (yes/no
 * "y"/"n", options and numbers zero-padded): the POST's size tells nothing. Number inputs replace the no-JS fields (.js-swap), always. Without
 * crypto.getRandomValues (or a usable design) nothing is intercepted: the form
 * posts as it is and the server randomizes.
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

  // Bernoulli(exp(-s/t)) for 0 <= s/t <= 1: Canonne, Kamath & Steinke 2020, Alg. 1.
  function bernExp(s, t) {
    let k = 1n;
    while (bern(s, t * k)) k++;
    return (k & 1n) === 1n;
  }

  // Discrete Laplace, P(Z = z) proportional to exp(-|z| s/t): CKS 2020, Alg. 2.
  function discreteLaplace(s, t) {
    for (;;) {
      const u = below(t);
      if (!bernExp(u, t)) continue;
      let v = 0n;
      while (bernExp(1n, 1n)) v++;
      const y = (u + t * v) / s;
      const negative = !bern(1n, 2n);
      if (negative && y === 0n) continue;
      return negative ? -y : y;
    }
  }

  const mechanisms = {
    two_coin_randomized_response(p, value) {
      if (value !== "yes" && value !== "no") throw new Error("not yes/no: " + value);
      if (bern(...rational(p.truth_probability))) return value;
      return bern(...rational(p.forced_yes_probability)) ? "yes" : "no";
    },
    generalized_randomized_response(p, value) {
      const k = BigInt(p.k), x = integer(value, 0, k - 1n);
      if (k < 2n) throw new Error("k < 2");
      if (bern(...rational(p.keep_probability))) return Number(x);
      const other = below(k - 1n);
      return Number(other >= x ? other + 1n : other);
    },
    optimized_unary_encoding(p, value) {
      const k = Number(p.k), x = Number(integer(value, 0, k - 1));
      const one = rational(p.one_probability), flip = rational(p.flip_to_one_probability);
      let bits = "";
      for (let j = 0; j < k; j++) bits += bern(...(j === x ? one : flip)) ? "1" : "0";
      return bits;
    },
    discrete_laplace(p, value) {
      const x = integer(value, p.min, p.max), [s, t] = rational(p.gamma, true);
      if (s === 0n) throw new Error("gamma must be positive");
      return Number(x + discreteLaplace(s, t));
    },
    duchi_binary(p, value) {
      const lo = BigInt(p.min), hi = BigInt(p.max), x = integer(value, lo, hi);
      const [a, b] = rational(p.lean), d = hi - lo;
      if (d < 1n) throw new Error("max <= min");
      // P(1 | x) = (d + (a/b)(2x - min - max)) / (2d), as one fraction.
      return bern(b * d + a * (2n * x - lo - hi), 2n * b * d) ? 1 : 0;
    },
  };

  function randomize(parameters, value) {
    const name = parameters && parameters.mechanism;
    if (!Object.prototype.hasOwnProperty.call(mechanisms, name)) {
      throw new Error("unknown mechanism: " + name);
    }
    return mechanisms[name](parameters, value);
  }

  function sample(parameters, value, count) {
    const histogram = {};
    for (let i = 0; i < count; i++) {
      const key = String(randomize(parameters, value));
      histogram[key] = (histogram[key] || 0) + 1;
    }
    return histogram;
  }

  window.surveyRandomizer = Object.freeze({ randomize, sample });

  // the form

  const fromWire = (p, v) =>
    p.mechanism === "two_coin_randomized_response" ? { y: "yes", n: "no" }[v] : v;

  function pad(number) { // 17 chars: "-" or "0", then 16 digits
    const x = integer(number, -(10n ** 15n), 10n ** 15n), d = (x < 0n ? -x : x).toString();
    return x < 0n ? "-" + d.padStart(16, "0") : d.padStart(17, "0");
  }

  function toWire(p, report) {
    switch (p.mechanism) {
      case "two_coin_randomized_response": return report === "yes" ? "y" : "n";
      case "generalized_randomized_response":
        return String(report).padStart(String(p.k - 1).length, "0");
      case "discrete_laplace": return pad(report);
      default: return String(report); // unary bits, Duchi's bit: fixed width
    }
  }

  function randomizedForm(form) {
    const design = JSON.parse(form.getAttribute("data-design"));
    if (!design || typeof design !== "object") throw new Error("no design");
    const out = document.createElement("form");
    out.method = "post";
    out.action = form.action;
    out.hidden = true;
    const add = (name, value) => {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = value;
      out.appendChild(input);
    };
    const hidden = new Set();
    form.querySelectorAll('input[type="hidden"]').forEach((input) => {
      hidden.add(input.name);
      add(input.name, input.value);
    });
    const seen = new Set();
    for (const [name, value] of new FormData(form)) {
      if (hidden.has(name) || typeof value !== "string" || value === "") continue;
      if (Object.prototype.hasOwnProperty.call(design, name)) {
        if (seen.has(name)) throw new Error("two answers for " + name);
        seen.add(name);
        const p = design[name];
        add(name, toWire(p, randomize(p, fromWire(p, value))));
      } else {
        const input = form.querySelector(`[name="${name}"]:enabled`);
        add(name, input && input.type === "number" ? pad(value) : value); // plain
      }
    }
    add("randomized", "client");
    return out;
  }

  function onSubmit(event) {
    const form = event.currentTarget;
    if (!form.checkValidity()) return; // the browser points at what is missing
    let out;
    try {
      out = randomizedForm(form);
    } catch (error) {
      console.error("not randomized in the browser:", error);
      return; // posts as it is; the server randomizes
    }
    event.preventDefault();
    form.reset(); // so Back shows no true answer
    document.body.appendChild(out);
    const button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    out.submit();
  }

  const all = (selector, f) => document.querySelectorAll(selector).forEach(f);

  function start() {
    all(".js-swap", (e) => { // no-JS field off, number input on
      e.hidden = !e.hidden;
      e.querySelector("input,select").disabled = e.hidden;
    });
    if (!(window.crypto && window.crypto.getRandomValues)) return;
    all('form[data-randomize="survey"]', (f) => f.addEventListener("submit", onSubmit));
    all(".js-only", (e) => { e.hidden = false; });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
