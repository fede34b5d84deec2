const { spawnSync } = require('child_process');
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 10);
const results = {};
for (let i = 0; i < runs; i++) {
  const seed = Math.floor(Math.random() * 1e9);
  const r = spawnSync('npx', ['jest', '--randomize', `--seed=${seed}`, '--json', '--silent'], { encoding: 'utf8' });
  let json;
  try { json = JSON.parse(r.stdout); } catch { continue; }
  for (const file of json.testResults) {
    for (const t of file.assertionResults) {
      const k = `${file.name}::${t.fullName}`;
      results[k] = results[k] || { pass: 0, fail: 0, seeds: [] };
      if (t.status === 'passed') results[k].pass++; else { results[k].fail++; results[k].seeds.push(seed); }
    }
  }
}
for (const [k, v] of Object.entries(results)) if (v.pass && v.fail) console.log(k, v);
