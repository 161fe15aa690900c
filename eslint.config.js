// ESLint's own recommended rules for the browser scripts in survey_app/static/, plus the few that keep
// them in one modern style (const/let, strict equality, no implicit globals). The scripts
// run as classic scripts in any current browser, with no build step.
"use strict";

const js = require("@eslint/js");
const globals = require("globals");

module.exports = [
  js.configs.recommended,
  {
    files: ["survey_app/static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2020,
      sourceType: "script",
      globals: { ...globals.browser },
    },
    rules: {
      "no-var": "error",
      "prefer-const": "error",
      eqeqeq: ["error", "always"],
      strict: ["error", "function"],
      "no-implicit-globals": "error",
    },
  },
  {
    files: ["eslint.config.js"],
    languageOptions: { sourceType: "commonjs", globals: { ...globals.node } },
  },
];
