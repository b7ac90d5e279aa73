import { describe, expect, it } from "vitest";
import { checkList, trpcPath } from "../src/console/cases.js";
import { CookieJar } from "../src/console/http.js";
import { loginFormAction } from "../src/console/keycloak.js";

describe("console benchmark clients", () => {
  it("keeps cookies, replaces them, and drops expired or emptied ones", () => {
    const jar = new CookieJar();
    jar.take({
      "set-cookie": [
        "authjs.session-token=abc; Path=/; HttpOnly",
        "AUTH_SESSION_ID=xyz;Version=1;Path=/realms/edgefleet/;Secure",
        "gone=1; Max-Age=0",
      ],
    });
    expect(jar.header()).toBe("authjs.session-token=abc; AUTH_SESSION_ID=xyz");
    jar.take({ "set-cookie": ["authjs.session-token=def", "AUTH_SESSION_ID=; Path=/"] });
    jar.take({ "set-cookie": ["old=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT"] });
    expect(jar.header()).toBe("authjs.session-token=def");
    expect(jar.has("old")).toBe(false);
  });

  it("finds Keycloak's login form action and unescapes it", () => {
    const html = `<form id="kc-form-login" class="x" action="http://kc/realms/r/login-actions/authenticate?session_code=a&amp;tab_id=b" method="post">`;
    expect(loginFormAction(html)).toBe(
      "http://kc/realms/r/login-actions/authenticate?session_code=a&tab_id=b",
    );
    expect(() => loginFormAction("<html>signed in</html>")).toThrow(/no login form/);
  });

  it("encodes a tRPC query the way the console's link does (superjson envelope)", () => {
    expect(trpcPath("node.counts")).toBe("/api/trpc/node.counts");
    const path = trpcPath("node.list", { limit: 2, selector: "a in (b,c)" });
    const input = new URL(`http://x${path}`).searchParams.get("input");
    expect(JSON.parse(input ?? "")).toEqual({ json: { limit: 2, selector: "a in (b,c)" } });
  });

  it("refuses a page of the wrong size or with a node outside the filter", () => {
    const item = (name: string, site: string) => ({ id: name, name, site, labels: { site } });
    const page = [item("a", "plant-7"), item("b", "plant-7")];
    const everyPlant7 = (i: { labels: Record<string, string> }) => i.labels.site === "plant-7";
    expect(() => checkList(page, { items: 2, every: everyPlant7 })).not.toThrow();
    expect(() => checkList(page, { items: 3 })).toThrow(/expected 3 nodes, got 2/);
    expect(() =>
      checkList([...page.slice(0, 1), item("c", "plant-8")], { items: 2, every: everyPlant7 }),
    ).toThrow(/node c does not match/);
  });
});
