(function () {
  "use strict";
  const { bern, rational, integer, register } = window.surveyRandomizer;
  register("optimized_unary_encoding", {
    sample(p, value) {
      const k = Number(p.k), x = Number(integer(value, 0, k - 1));
      const one = rational(p.one_probability), flip = rational(p.flip_to_one_probability);
      let bits = "";
      for (let j = 0; j < k; j++) bits += bern(...(j === x ? one : flip)) ? "1" : "0";
      return bits;
    },
  });
})();
