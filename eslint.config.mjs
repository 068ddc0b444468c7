// The JavaScript linter of `make check` (pinned in package-lock.json): the recommended rules,
// which catch real mistakes (an undefined name, an unused variable, unreachable code), not taste.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "site/", "wasm_assets/", ".venv/", ".venv-site/"] },
  js.configs.recommended,
  {
    // The site's plain ES modules run in the page, in workers and in the service worker.
    files: ["site_src/js/**/*.js", "tests/**/*.js"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: { ...globals.browser, ...globals.worker },
    },
  },
  {
    files: ["site_src/hooks/service_worker.js"],
    languageOptions: { sourceType: "module", globals: { ...globals.serviceworker } },
  },
  {
    // Run by Node at build time (the exercise's Python heap).
    files: ["site_src/hooks/*.mjs", "tests/**/*.mjs", "eslint.config.mjs"],
    languageOptions: { sourceType: "module", globals: { ...globals.node } },
  },
  {
    rules: {
      // `catch (e) {}` with a reason in a comment is how the runtime ignores a failure on purpose.
      "no-empty": ["error", { allowEmptyCatch: true }],
      // A caught error is often replaced by a message in words; `{ dropped, ...rest }` drops a key.
      "no-unused-vars": ["error", { caughtErrors: "none", ignoreRestSiblings: true }],
      // Those messages in words are what the learner reads; the low-level error adds nothing there.
      "preserve-caught-error": "off",
    },
  },
];
