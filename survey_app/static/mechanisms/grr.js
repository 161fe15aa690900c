(function () {
  "use strict";
  const { below, bern, rational, integer, register } = window.surveyRandomizer;
  register("generalized_randomized_response", {
    sample(p, value) {
      const k = BigInt(p.k), x = integer(value, 0, k - 1n);
      if (k < 2n) throw new Error("k < 2");
      if (bern(...rational(p.keep_probability))) return Number(x);
      const other = below(k - 1n);
      return Number(other >= x ? other + 1n : other);
    },
    toWire: (p, report) => String(report).padStart(String(p.k - 1).length, "0"),
  });
})();
