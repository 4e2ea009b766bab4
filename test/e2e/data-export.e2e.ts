import { unzipSync } from "fflate";
import { describe, expect, inject, it } from "vitest";
import { baseUrl, browserForFile, createUser, signedInContext } from "./browser.ts";
import { seedPhotos } from "./support/library-bytes.ts";

// "Export my data" as a person does it (docs/decisions/0112-account-deletion-and-export.md): the button on
// /settings, the user's object preparing the ZIP in the background, the e-mail with its link, and the link itself,
// which works without a session. The workerd test (test/integration/data-export.test.ts) covers the ZIP's contents
// and the link's signature; only here does the e-mail go out and its link get followed.

const SUBJECT = "Your Stagewise data export is ready";

const b = browserForFile();

/** The newest e-mail to `to` with the subject, waited for (it goes out after the page's answer). */
async function mailTo(to: string): Promise<{ text: string; html?: string }> {
  const api = `http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=${encodeURIComponent(to)}`;
  for (let i = 0; i < 200; i++) {
    const mails = (await (await fetch(api)).json()) as { subject: string; text: string; html?: string }[];
    const mail = mails.filter((m) => m.subject === SUBJECT).at(-1);
    if (mail) return mail;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no "${SUBJECT}" e-mail to ${to}`);
}

describe("export my data", () => {
  it("e-mails a link to a ZIP of the account and its originals, which opens without a session and is refused when altered", async () => {
    const user = await createUser({ credits: 3 });
    const [photoId] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken ?? "" }, 1, "Porch");
    const original = new Uint8Array(
      await (
        await fetch(`${baseUrl()}/api/photos/${photoId}/original`, {
          headers: { Cookie: `sw_session=${user.sessionToken}` },
        })
      ).arrayBuffer(),
    );
    expect(original.byteLength).toBeGreaterThan(0);

    const page = await b.newPage(await signedInContext(b, user));
    await page.goto("/settings");
    await page.getByRole("button", { name: "Export my data" }).click();
    await page.getByText("We are preparing your export and will e-mail you its link.").waitFor();

    const mail = await mailTo(user.email);
    const link = /https?:\/\/\S+\/api\/exports\/\S+/.exec(mail.text)?.[0] ?? "";
    const address = new URL(link);
    // The link is to this site, in the text and in the HTML part alike.
    expect(address.origin).toBe(new URL(baseUrl()).origin);
    expect(mail.html ?? "").toContain(address.pathname);

    // Followed with no cookie at all, as from a mail app on another device.
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/zip");
    expect(res.headers.get("Content-Disposition")).toContain("attachment");
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const json = JSON.parse(new TextDecoder().decode(files["account.json"])) as {
      account: { email: string; passwordHash?: string };
      photos: { id: string }[];
    };
    expect(json.account.email).toBe(user.email);
    expect(json.account.passwordHash).toBeUndefined();
    expect(json.photos.map((p) => p.id)).toEqual([photoId]);
    expect(files[`photos/${photoId}/original.jpg`]).toEqual(original);

    // The same link with a later expiry, or its signature changed, opens nothing.
    const later = new URL(link);
    later.searchParams.set("exp", String(Number(address.searchParams.get("exp")) + 1));
    const forged = new URL(link);
    const sig = address.searchParams.get("sig") ?? "";
    // Another last hex digit (the signature is lowercase hex; "a" and "A" would decode alike).
    forged.searchParams.set("sig", `${sig.slice(0, -1)}${sig.endsWith("0") ? "1" : "0"}`);
    for (const altered of [later, forged]) {
      const refused = await fetch(altered);
      expect(refused.status, altered.search).toBeGreaterThanOrEqual(400);
      expect(refused.status, altered.search).toBeLessThan(500);
      expect(refused.headers.get("Content-Type"), altered.search).not.toBe("application/zip");
    }
    page.assertClean();
  });
});
