import { describe, expect, it } from "vitest";
import { webhookUrlProblem } from "../src";

describe("webhook URL input check", () => {
  it.each([
    "https://hooks.example.com/edgefleet",
    "http://203.0.113.7:8080/alert",
    "https://[2001:db8::1]/x",
  ])("accepts %s", (url) => expect(webhookUrlProblem(url)).toBeNull());

  it.each([
    ["ftp://example.com/x", /http/],
    ["file:///etc/passwd", /http/],
    ["not a url", /valid URL/],
    ["https://user:pw@example.com/", /credentials/],
    ["http://127.0.0.1:9009/api/v1/push", /loopback/],
    ["http://localhost:8090/internal", /local name/],
    ["http://[::1]:5432/", /loopback/],
    ["http://[::ffff:127.0.0.1]/", /loopback/],
    ["http://169.254.169.254/latest/meta-data", /link-local/],
    ["http://10.0.0.5/", /private/],
    ["http://0.0.0.0:4222/", /loopback/],
  ])("refuses %s", (url, reason) => expect(webhookUrlProblem(url)).toMatch(reason));
});

describe("webhook URL check for loopback receivers (tests, opted-in deployments)", () => {
  it("accepts loopback when allowed, but never another scheme", () => {
    expect(webhookUrlProblem("http://127.0.0.1:8080/x", { allowPrivateAddresses: true })).toBeNull();
    expect(webhookUrlProblem("gopher://127.0.0.1/", { allowPrivateAddresses: true })).toMatch(/http/);
  });
});
