/*
 * Tick all that apply, one sampled option (privacy/mechanisms/sampled_option.py): an
 * option j drawn by below(k), its tick kept with the exact p, else flipped: "j:b".
 */
(function () {
  "use strict";
  const { below, bern, rational, integer, register } = window.surveyRandomizer;
  register("sampled_option", {
    sample(p, value) {
      const k = Number(integer(p.k, 2, 1000)), ticked = String(value);
      if (!new RegExp(`^[01]{${k}}$`).test(ticked)) throw new Error("not a set: " + value);
      const j = Number(below(BigInt(k))), kept = bern(...rational(p.keep_probability));
      return j + ":" + Number((ticked[j] === "1") === kept);
    },
    toWire: (p, report) => String(report).padStart(String(p.k - 1).length + 2, "0"),
  });
})();
