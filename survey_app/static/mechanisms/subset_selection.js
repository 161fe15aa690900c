/*
 * Subset selection (privacy/mechanisms/subset_selection.py): the truth with the exact p,
 * then the rest from the other options by a partial Fisher-Yates shuffle on below().
 */
(function () {
  "use strict";
  const { below, bern, rational, integer, register } = window.surveyRandomizer;
  register("subset_selection", {
    sample(p, value) {
      const k = Number(integer(p.k, 2, 1000)), x = Number(integer(value, 0, k - 1));
      const kept = bern(...rational(p.include_probability)), pool = [];
      const n = Number(integer(p.size, 1, k - 1)) - (kept ? 1 : 0);
      for (let j = 0; j < k; j++) if (j !== x) pool.push(j);
      for (let i = 0; i < n; i++) {
        const j = i + Number(below(BigInt(pool.length - i)));
        [pool[i], pool[j]] = [pool[j], pool[i]];
      }
      const set = kept ? [x, ...pool.slice(0, n)] : pool.slice(0, n);
      return set.sort((a, b) => a - b).join(",");
    },
    toWire: (p, report) =>
      String(report).split(",").map((i) => i.padStart(String(p.k - 1).length, "0")).join(","),
  });
})();
