(function () {
  "use strict";
  const { bern, rational, integer, register } = window.surveyRandomizer;
  register("duchi_binary", {
    sample(p, value) {
      const lo = BigInt(p.min), hi = BigInt(p.max), x = integer(value, lo, hi);
      const [a, b] = rational(p.lean), d = hi - lo;
      if (d < 1n) throw new Error("max <= min");
      // P(1 | x) = (d + (a/b)(2x - min - max)) / 2d, as one fraction.
      return bern(b * d + a * (2n * x - lo - hi), 2n * b * d) ? 1 : 0;
    },
  });
})();
