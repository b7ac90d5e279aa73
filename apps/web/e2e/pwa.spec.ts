import { expect, test } from "@playwright/test";
import { signInAs } from "./keycloak";

interface ManifestIcon {
  src: string;
  sizes: string;
  type?: string;
  purpose?: string;
}

/** Width and height from a PNG's IHDR chunk (bytes 16–23). */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(1, 4).toString("ascii")).toBe("PNG");
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

test("the console is installable: a valid manifest with fetchable icons, linked from the pages", async ({
  page,
  request,
}) => {
  const response = await request.get("/manifest.webmanifest");
  expect(response.status()).toBe(200);
  expect(response.headers()["content-type"]).toMatch(/application\/manifest\+json|application\/json/);
  const manifest = (await response.json()) as {
    name: string;
    short_name: string;
    start_url: string;
    display: string;
    theme_color: string;
    background_color: string;
    icons: ManifestIcon[];
  };
  expect(manifest).toMatchObject({ name: "Edgefleet", short_name: "Edgefleet", display: "standalone" });
  expect(manifest.start_url).toMatch(/^\//);
  expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/i);

  // What Chromium needs to offer installation: PNG icons of 192 and 512 px, plus a maskable one.
  const pngs = manifest.icons.filter((icon) => icon.type === "image/png");
  for (const size of ["192x192", "512x512"]) expect(pngs.map((icon) => icon.sizes)).toContain(size);
  expect(pngs.some((icon) => icon.purpose?.split(" ").includes("maskable"))).toBe(true);
  for (const icon of manifest.icons) {
    const file = await request.get(icon.src);
    expect(file.status(), icon.src).toBe(200);
    expect(file.headers()["content-type"], icon.src).toContain(icon.type ?? "image/");
    if (icon.type === "image/png") {
      const [width, height] = icon.sizes.split("x").map(Number);
      expect(pngSize(await file.body()), icon.src).toEqual({ width, height });
    }
  }

  // Pages link the manifest and set the theme colour (root layout).
  await signInAs(page, "alice");
  await expect(page.locator('link[rel="manifest"]')).toHaveAttribute("href", "/manifest.webmanifest");
  await expect(page.locator('meta[name="theme-color"]')).toHaveAttribute("content", manifest.theme_color);
  await expect(page.locator('link[rel="apple-touch-icon"]')).toHaveCount(1);

  // Chromium's own verdict: it parsed the manifest without errors and finds nothing that stops
  // installation, except that Playwright's browser contexts are incognito-like.
  const cdp = await page.context().newCDPSession(page);
  const parsed = await cdp.send("Page.getAppManifest");
  expect(parsed.url).toMatch(/\/manifest\.webmanifest$/);
  expect(parsed.errors).toEqual([]);
  const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors");
  expect(installabilityErrors.filter((error) => error.errorId !== "in-incognito")).toEqual([]);
});

// Phone widths of every page, and the phone navigation: phone.spec.ts.
