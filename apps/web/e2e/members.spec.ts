import { type Browser, expect, type Page, test } from "@playwright/test";
import { confirm, toast } from "./console";
import { keycloakLoginUrl, signInAs } from "./keycloak";

// Roles are checked by the server on every call: alice (owner of Acme) changes carol's role and
// carol's next action is allowed or refused accordingly, without carol signing in again.

async function signedIn(browser: Browser, username: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInAs(page, username);
  return page;
}

test("alice changes carol's role and the change takes effect at carol's next action", async ({ browser }) => {
  // Three people sign in through Keycloak, one of them for the first time: more than the default minute.
  test.setTimeout(180_000);
  // carol's first sign-in links her Keycloak identity and gives her an Acme membership.
  const carol = await signedIn(browser, "carol");
  const alice = await signedIn(browser, "alice");

  await alice.goto("/members");
  const carolsRole = alice.getByLabel("Role of carol@acme.example");
  await carolsRole.selectOption("admin");
  await expect(toast(alice, "carol@acme.example is now admin")).toBeVisible();

  await carol.goto("/members");
  await expect(carol.getByTestId("my-role")).toContainText("Your role here: admin");
  const invite = carol.getByRole("button", { name: "Invite" });
  await expect(invite).toBeEnabled();

  // Demoted while her page is open: the page still offers the invitation, the server refuses it.
  await carolsRole.selectOption("viewer");
  await expect(toast(alice, "carol@acme.example is now viewer")).toBeVisible();
  const refusedEmail = `refused-${Date.now()}@acme.example`;
  await carol.getByLabel("E-mail to invite").fill(refusedEmail);
  await invite.click();
  // (Next.js keeps an empty route-announcer alert on every page: pick ours by its text.)
  await expect(
    carol.getByRole("alert").filter({ hasText: "member.invite needs the admin role; you are viewer" }),
  ).toBeVisible();

  // Reloaded, the page knows her role: the controls are disabled and say why.
  await carol.reload();
  await expect(carol.getByTestId("my-role")).toContainText("Your role here: viewer");
  await expect(invite).toBeDisabled();
  await expect(carol.getByLabel("Role of alice@acme.example")).toBeDisabled();
  await expect(carol.getByTestId("disabled-reason")).toHaveText(
    "Changing members needs the admin role; you are viewer.",
  );
  await expect(carol.locator(`[data-email="${refusedEmail}"]`)).toHaveCount(0);

  // Promoted again: her invitation goes through and she can remove the invitee (with a confirmation).
  // The first "now admin" toast may still be there (sonner pauses toasts on a page in the
  // background): a new one must appear beside it.
  const nowAdmin = toast(alice, "carol@acme.example is now admin");
  const before = await nowAdmin.count();
  await carolsRole.selectOption("admin");
  await expect(nowAdmin).toHaveCount(before + 1);
  await carol.reload();
  const invitee = `invitee-${Date.now()}@acme.example`;
  await carol.getByLabel("E-mail to invite").fill(invitee);
  await carol.getByLabel("Role to grant").selectOption("operator");
  await carol.getByRole("button", { name: "Invite" }).click();
  await expect(toast(carol, `${invitee} invited as operator`)).toBeVisible();
  const row = carol.locator(`[data-testid="member-row"][data-email="${invitee}"]`);
  await expect(row).toContainText("invited");
  // An admin cannot hand out the owner role.
  await expect(row.getByRole("option", { name: "owner" })).toBeDisabled();

  // The invitation made a Keycloak account: the one-time password signs the invitee in, Keycloak
  // asks for a password and a name of their own, and they land in Acme as an operator.
  const oneTimePassword = (await carol.getByTestId("secret").textContent())?.trim() ?? "";
  expect(oneTimePassword.length).toBeGreaterThanOrEqual(16);
  const inviteePage = await (await browser.newContext()).newPage();
  await inviteePage.goto("/members");
  await expect(inviteePage).toHaveURL(keycloakLoginUrl);
  await inviteePage.locator("#username").fill(invitee);
  if (!(await inviteePage.locator("#password").isVisible())) await inviteePage.locator("#kc-login").click();
  await inviteePage.locator("#password").fill(oneTimePassword);
  await inviteePage.locator("#kc-login").click();
  await inviteePage.locator("#password-new").fill("a-password-of-their-own");
  await inviteePage.locator("#password-confirm").fill("a-password-of-their-own");
  await inviteePage.locator("[type=submit]").first().click();
  // Keycloak's user profile wants a name, which the invitee gives themselves.
  await inviteePage.locator("#firstName").fill("Ivy");
  await inviteePage.locator("#lastName").fill("Invitee");
  await inviteePage.locator("[type=submit]").first().click();
  await expect(inviteePage).toHaveURL(/\/members$/);
  await expect(inviteePage.getByTestId("my-role")).toContainText("Your role here: operator");
  await carol.reload();
  await expect(row).toContainText("active");

  await row.getByRole("button", { name: "Remove" }).click();
  await confirm(carol, "Yes, remove");
  await expect(toast(carol, `${invitee} removed`)).toBeVisible();
  await expect(row).toHaveCount(0);

  // Leave carol as a viewer, the role her first sign-in gives, for whoever runs next.
  await carolsRole.selectOption("viewer");
  await expect(toast(alice, "carol@acme.example is now viewer")).toBeVisible();
});
