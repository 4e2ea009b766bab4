import { describe, expect, inject, it } from "vitest";
import { baseUrl, browserForFile, createUser, signedInContext, signIn } from "./browser.ts";

const b = browserForFile();

describe("admin console", () => {
  it("a POST to an admin page that takes no form: 404 to anyone but an admin, 405 to an admin, never reported as our error", async () => {
    const user = await createUser({});
    const admin = await createUser({ role: "admin" });
    const post = (token: string | null, path = "/admin/operations") =>
      fetch(`${baseUrl()}${path}`, {
        method: "POST",
        headers: {
          ...(token ? { Cookie: `sw_session=${token}` } : {}),
          Origin: baseUrl(),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: "intent=anything",
        redirect: "manual",
      });
    for (const path of ["/admin", "/admin/operations", "/admin/teams", "/admin/teams/x"]) {
      for (const token of [user.sessionToken, null]) {
        const hidden = await post(token, path);
        expect(hidden.status, `${path} ${token ? "user" : "visitor"}`).toBe(404);
        await hidden.body?.cancel();
      }
    }
    const res = await post(admin.sessionToken);
    expect(res.status).toBe(405);
    const requestId = res.headers.get("X-Request-Id");
    expect(requestId).toBeTruthy();
    await res.body?.cancel();
    // The error reporter sends in the background: give it the time an event takes to arrive at the local sink.
    await new Promise((r) => setTimeout(r, 1000));
    const sink = `http://127.0.0.1:${inject("ports").sentry}/_emulator/events?request_id=${requestId}`;
    expect(await (await fetch(sink)).json()).toEqual([]);
  });

  it("the operations page shows its figures to an admin, and the 404 of every admin page to anyone else", async () => {
    const admin = await createUser({ role: "admin" });
    const user = await createUser({});
    const page = await b.newPage(await signedInContext(b, admin));
    await page.goto("/admin");
    await page.getByRole("link", { name: "Operations" }).click();
    await page.getByRole("heading", { name: "Operations", level: 1 }).waitFor();
    expect(await page.getByTestId("jobs-queued").textContent()).toMatch(/^\d+$/);
    expect(await page.getByTestId("deletions-pending").textContent()).toMatch(/^\d+$/);
    // Read from the provider gate (ADR 0186): PROVIDER_CAP is 16 in wrangler.toml's vars.
    expect(await page.getByTestId("provider-slots").textContent()).toMatch(/^\d+ of 16 in flight, \d+ waiting$/);
    expect(await page.getByTestId("day-structure-refusals").textContent()).toMatch(/^\d+$/);
    page.assertClean();
    const others: Record<string, string>[] = [{ Cookie: `sw_session=${user.sessionToken}` }, {}];
    for (const headers of others) {
      const res = await fetch(`${baseUrl()}/admin/operations`, { headers, redirect: "manual" });
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("Provider latency");
    }
  });

  it("the teams page shows a team's seats and pool to an admin, and the 404 of every admin page to anyone else", async () => {
    const admin = await createUser({ role: "admin" });
    const owner = await createUser({});
    const name = `Console team ${Date.now()}`;
    const made = await fetch(`${baseUrl()}/teams`, {
      method: "POST",
      headers: {
        Cookie: `sw_session=${owner.sessionToken}`,
        Origin: baseUrl(),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ intent: "create-team", name }).toString(),
      redirect: "manual",
    });
    const teamId = /\/teams\/([a-z0-9]+)$/.exec(made.headers.get("Location") ?? "")?.[1] ?? "";
    expect(teamId).not.toBe("");
    const page = await b.newPage(await signedInContext(b, admin));
    await page.goto("/admin");
    await page.locator('a[href="/admin/teams"]').click();
    await page.getByRole("link", { name }).click();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
    expect(await page.getByTestId("team-seats").textContent()).toBe("1 / 1");
    expect(await page.getByTestId("team-pool").textContent()).toBe("0");
    page.assertClean();
    for (const headers of [{ Cookie: `sw_session=${owner.sessionToken}` }, {}] as Record<string, string>[]) {
      for (const path of ["/admin/teams", `/admin/teams/${teamId}`]) {
        const res = await fetch(`${baseUrl()}${path}`, { headers, redirect: "manual" });
        expect(res.status, path).toBe(404);
        expect(await res.text()).not.toContain(name);
      }
    }
  });

  it("the seeded admin grants 5 credits and the user's open dashboard shows them without a reload", async () => {
    const target = await createUser({ credits: 2 });
    const userPage = await b.newPage(await signedInContext(b, target));
    await userPage.goto("/dashboard");
    await userPage.waitForSelector("html[data-hydrated=true]");
    const credits = userPage.getByTestId("plan-status-card").getByTestId("credits");
    await expect.poll(() => credits.textContent()).toBe("2");
    await userPage.evaluate(() => {
      (window as unknown as { marker: number }).marker = 1;
    });

    const adminPage = await b.newPage(await b.newContext());
    await signIn(adminPage, "admin@example.com", "staging-demo-1");
    await adminPage.waitForURL((url) => url.pathname !== "/login");
    await adminPage.goto(`/admin?q=${encodeURIComponent(target.email)}`);
    await adminPage.getByRole("link", { name: target.email }).click();
    await adminPage.getByLabel("Credits (negative to remove)").fill("5");
    await adminPage.locator("#credits-reason").fill("Sorry for the slow upload yesterday");
    await adminPage.getByRole("button", { name: "Apply" }).click();
    await adminPage.getByText("Granted 5 credits. Balance: 7.").waitFor();

    await expect.poll(() => credits.textContent(), { timeout: 15_000 }).toBe("7");
    // Same page, no reload: the marker set before the grant is still there.
    expect(await userPage.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);
    userPage.assertClean();
  });

  it("finds a user by e-mail and grants 5 credits with a reason", async () => {
    const admin = await createUser({ role: "admin" });
    const target = await createUser({ credits: 2 });
    const page = await b.newPage(await signedInContext(b, admin));
    await page.goto("/admin");
    await page.getByRole("heading", { name: "Admin", level: 1 }).waitFor();
    await page.getByLabel("Search by e-mail").fill(target.email);
    await page.getByRole("button", { name: "Search" }).click();
    const rows = page.getByTestId("admin-user-row");
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole("link", { name: target.email }).click();
    await page.getByLabel("Credits (negative to remove)").fill("5");
    await page.locator("#credits-reason").fill("Welcome bonus for a new agency");
    // The form carries the submission id it was rendered with.
    const submission = await page.locator('input[name="submission"]').inputValue();
    expect(submission).toMatch(/^[0-9a-f-]{36}$/);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("Granted 5 credits. Balance: 7.").waitFor();
    await expect.poll(() => page.getByTestId("detail-credits").textContent()).toBe("7");
    await page.getByText("credits.grant by").waitFor();
    // The page now holds a fresh id for the next grant; sending the same form again changes nothing and says so.
    await expect.poll(() => page.locator('input[name="submission"]').inputValue()).not.toBe(submission);
    const again = await page.request.post(page.url(), {
      headers: { Origin: baseUrl() },
      form: { intent: "credits", amount: "5", reason: "Welcome bonus for a new agency", submission },
    });
    expect(await again.text()).toContain("This grant was already applied.");
    await page.reload();
    expect(await page.getByTestId("detail-credits").textContent()).toBe("7");
    page.assertClean();
  });

  it("refuses a removal below zero with a clear message", async () => {
    const admin = await createUser({ role: "admin" });
    const target = await createUser({ credits: 1 });
    const page = await b.newPage(await signedInContext(b, admin));
    await page.goto(`/admin?q=${encodeURIComponent(target.email)}`);
    await page.getByRole("link", { name: target.email }).click();
    await page.getByLabel("Credits (negative to remove)").fill("-3");
    await page.locator("#credits-reason").fill("Chargeback");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("Insufficient credits: the balance is 1.").waitFor();
    expect(await page.getByTestId("detail-credits").textContent()).toBe("1");
  });

  it("shows a verified non-admin a 404 at /admin and at every admin API", async () => {
    const user = await createUser();
    const page = await b.newPage(await signedInContext(b, user));
    const res = await page.goto("/admin");
    expect(res?.status()).toBe(404);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    const detail = await page.goto("/admin/users/anything");
    expect(detail?.status()).toBe(404);
    const cookie = `sw_session=${user.sessionToken}`;
    for (const [method, path] of [
      ["GET", "/api/admin/users"],
      ["GET", "/api/admin/users/x"],
      ["POST", "/api/admin/users/x/credits"],
      ["POST", "/api/admin/users/x/sessions/revoke"],
      ["POST", "/api/admin/users/x/role"],
    ] as const) {
      const r = await fetch(`${baseUrl()}${path}`, {
        method,
        headers: { Cookie: cookie, "Content-Type": "application/json" },
        body: method === "POST" ? "{}" : undefined,
      });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
  });

  it("lists a user's API keys and revokes one with its form, without JavaScript; the key then answers 401", async () => {
    const target = await createUser({ apiKey: true });
    const admin = await createUser({ role: "admin" });
    const api = () => fetch(`${baseUrl()}/api/v1/balance`, { headers: { Authorization: `Bearer ${target.apiKey}` } });
    expect((await api()).status).toBe(200);
    const page = await b.newPage(await signedInContext(b, admin, { javaScriptEnabled: false }));
    await page.goto(`/admin/users/${target.id}`);
    const keys = page.getByTestId("admin-api-keys");
    await keys.getByText(target.apiKey!.slice(0, 10)).waitFor();
    await keys.getByLabel("Reason").fill("Key posted in a public issue");
    await keys.getByRole("button", { name: "Revoke fixture" }).click();
    await page.getByText("Revoked the API key “fixture”").waitFor();
    await keys.getByText("Revoked by an admin").waitFor();
    expect((await api()).status).toBe(401);
    page.assertClean();
  });
});
