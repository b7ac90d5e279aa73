// Renders public/icons/icon.svg into the PNG icons the web app manifest lists, with the same
// Chromium the browser tests use (no image library needed): `node scripts/render-icons.mjs`.
// The maskable variant fills the whole square and keeps the drawing inside the 80 % safe zone.
import { readFile } from "node:fs/promises";
import { chromium } from "@playwright/test";

const dir = new URL("../public/icons/", import.meta.url);
const svg = await readFile(new URL("icon.svg", dir), "utf8");
const inner = svg.replace(/^[\s\S]*?<rect[^>]*\/>/, "").replace(/<\/svg>\s*$/, "");
const maskable = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">
  <rect width="512" height="512" fill="#0d74ce"/>
  <g transform="translate(256 256) scale(0.72) translate(-256 -256)">${inner}</g>
</svg>`;

const outputs = [
  { file: "icon-192.png", size: 192, source: svg },
  { file: "icon-512.png", size: 512, source: svg },
  { file: "maskable-512.png", size: 512, source: maskable },
  { file: "apple-touch-icon.png", size: 180, source: maskable },
];

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  for (const { file, size, source } of outputs) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    await page.setContent(
      `<html><body style="margin:0;background:transparent">${source.replace("<svg ", `<svg width="${size}" height="${size}" `)}</body></html>`,
    );
    await page.screenshot({ path: new URL(file, dir).pathname, omitBackground: true });
    await page.close();
    console.log(`wrote public/icons/${file} (${size}×${size})`);
  }
} finally {
  await browser.close();
}
