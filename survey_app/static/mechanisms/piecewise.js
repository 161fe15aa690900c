/*
 * The discrete piecewise mechanism mixed with Duchi's bit (privacy/mechanisms/piecewise.py):
 * with R = a/b, each report in the answer's window is R times as likely as one outside it,
 * so "in the window" has the exact chance w·a/(w·a + (N - w)·b). Duchi's lean follows
 * from where `high` lies (the module's `lean`), as one integer fraction.
 */
(function () {
  "use strict";
  const { below, bern, rational, integer, pad, register } = window.surveyRandomizer;
  register("piecewise", {
    sample(p, value) {
      const lo = BigInt(p.min), span = BigInt(p.max) - lo, d = integer(value, lo, p.max) - lo;
      const s = BigInt(p.step), w = BigInt(p.width), hi = BigInt(p.high), n = span * s + w;
      const [a, b] = rational(p.ratio, true), total = w * a + (n - w) * b;
      if (span < 1n || s < 1n || w < 1n || a <= b) throw new Error("bad parameters");
      if (!bern(...rational(p.piecewise_share))) {
        // r = num/den; P(high | d) = (1 + r(2d - span)/span)/2.
        const num = span * (a - b) * w * s;
        const den = 2n * hi * total - b * n * (n - 1n) - (a - b) * w * (w - 1n) - num;
        const up = bern(den * span + num * (2n * d - span), 2n * den * span);
        return Number(up ? hi : n - 1n - hi);
      }
      const start = s * d;
      if (bern(w * a, total)) return Number(start + below(w));
      const other = below(n - w);
      return Number(other < start ? other : other + w);
    },
    toWire: (p, report) => pad(report),
  });
})();
