(function () {
  "use strict";
  const { bern, rational, register } = window.surveyRandomizer;
  register("two_coin_randomized_response", {
    sample(p, value) {
      if (value !== "yes" && value !== "no") throw new Error("not yes/no: " + value);
      if (bern(...rational(p.truth_probability))) return value;
      return bern(...rational(p.forced_yes_probability)) ? "yes" : "no";
    },
    fromWire: (p, v) => ({ y: "yes", n: "no" })[v],
    toWire: (p, report) => (report === "yes" ? "y" : "n"),
  });
})();
