(function () {
  "use strict";
  const { below, bern, rational, integer, pad, register } = window.surveyRandomizer;

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

  register("discrete_laplace", {
    sample(p, value) {
      const x = integer(value, p.min, p.max), [s, t] = rational(p.gamma, true);
      if (s === 0n) throw new Error("gamma must be positive");
      return Number(x + discreteLaplace(s, t));
    },
    toWire: (p, report) => pad(report),
  });
})();
