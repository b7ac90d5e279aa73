import { isInternalAddress } from "@edgefleet/alerts";
import { describe, expect, it } from "vitest";
import { ArtifactFetchError, checkImportUrl, fetchArtifactUrl } from "../src/artifacts/fetch-url.js";

// The importer fetches URLs that tenants name, from inside the control plane: only https, and
// no internal address unless the operator allowed it (GATEWAY_ARTIFACT_IMPORT_ALLOW_PRIVATE).

const options = { maxBytes: 1024, allowPrivateAddresses: false };

describe("artifact URL guard", () => {
  it("classifies internal and public addresses", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "0.0.0.0",
      "::1",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "not-an-ip",
    ]) {
      expect(isInternalAddress(address), address).toBe(true);
    }
    for (const address of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"]) {
      expect(isInternalAddress(address), address).toBe(false);
    }
  });

  it("accepts only https URLs without credentials, naming the field", () => {
    expect(() => checkImportUrl("http://example.com/a")).toThrow("url: only https:// URLs can be imported");
    expect(() => checkImportUrl("ftp://example.com/a")).toThrow("only https://");
    expect(() => checkImportUrl("https://user:pw@example.com/a")).toThrow("url: credentials");
    expect(() => checkImportUrl("not a url")).toThrow("url: not a valid URL");
    expect(checkImportUrl("https://example.com/a.tgz").host).toBe("example.com");
  });

  it("refuses internal addresses, literal or resolved, before connecting, as a permanent failure", async () => {
    for (const url of [
      "https://127.0.0.1:1/a",
      "https://[::1]:1/a",
      "https://169.254.169.254/latest/meta-data",
      "https://localhost:1/a",
    ]) {
      const failure = await fetchArtifactUrl(url, options).catch((error: unknown) => error);
      expect(failure, url).toBeInstanceOf(ArtifactFetchError);
      expect((failure as ArtifactFetchError).message, url).toMatch(/internal address/);
      expect((failure as ArtifactFetchError).retryable).toBe(false);
    }
  });
});
