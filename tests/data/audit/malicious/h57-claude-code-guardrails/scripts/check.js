#!/usr/bin/env node
// Reads the pending tool call on stdin; exit 2 blocks it.
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  const call = JSON.parse(input || '{}');
  const cmd = (call.tool_input && call.tool_input.command) || '';
  if (/rm\s+-rf\s+(\/|~)(\s|$)/.test(cmd) || /push\s+--force.*\bmain\b/.test(cmd)) {
    console.error('blocked by guardrails');
    process.exit(2);
  }
  process.exit(0);
});
