import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { seriousAxeViolations } from "./axe.ts";
import { baseUrl, browserForFile, createUser, signedInContext } from "./browser.ts";
import { PUBLIC_PAGES } from "./public-pages.ts";

const b = browserForFile();

async function hydrated(page: Page, path: string) {
  const res = await page.goto(path);
  await page.waitForSelector("html[data-hydrated=true]");
  return res;
}

describe("every public page", () => {
  for (const { path, heading } of PUBLIC_PAGES) {
    it(`${path} answers 200, shows '${heading}' and has no serious accessibility problem`, async () => {
      const page = await b.newPage();
      const res = await hydrated(page, path);
      expect(res?.status()).toBe(200);
      expect((await page.getByRole("heading", { level: 1 }).textContent())?.trim()).toBe(heading);
      expect(await seriousAxeViolations(page)).toEqual([]);
      page.assertClean();
    });
  }

  it("has no serious accessibility problem at phone width with the menu and the contact form open", async () => {
    const ctx = await b.newContext({ viewport: { width: 390, height: 844 } });
    const page = await b.newPage(ctx);
    await hydrated(page, "/");
    await page.getByLabel("Menu").click();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await hydrated(page, "/gallery");
    await page.getByRole("link", { name: "Contact Us" }).click();
    await page.waitForSelector("dialog:modal");
    expect(await seriousAxeViolations(page)).toEqual([]);
    page.assertClean();
  });

  it("sends a signed-out visitor on an unknown address to /login", async () => {
    const res = await fetch(`${baseUrl()}/no-such-page?x=1`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(`/login?redirectTo=${encodeURIComponent("/no-such-page?x=1")}`);
    const page = await b.newPage();
    await page.goto("/no-such-page?x=1");
    await page.getByRole("heading", { name: "Welcome back" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/login");
  });
});

describe("the landing page", () => {
  it("keeps one FAQ item open at a time", async () => {
    const page = await b.newPage();
    await hydrated(page, "/");
    const faq = page.getByTestId("faq");
    const openCount = () => faq.locator("details[open]").count();
    expect(await openCount()).toBe(1);
    await faq.getByText("How do credits work?").click();
    expect(await openCount()).toBe(1);
    expect(await faq.locator("details[open] summary").textContent()).toBe("How do credits work?");
    await faq.getByText("Can I get a refund?").click();
    expect(await openCount()).toBe(1);
    expect(await faq.locator("details[open] summary").textContent()).toBe("Can I get a refund?");
    await faq.getByText("Can I get a refund?").click();
    expect(await openCount()).toBe(0);
    page.assertClean();
  });

  it("moves the before/after slider with the arrow keys in 5% steps from 50%", async () => {
    const page = await b.newPage();
    await hydrated(page, "/");
    const slider = page.locator("#before-after-gallery").getByRole("slider");
    expect(await slider.getAttribute("aria-valuenow")).toBe("50");
    expect(await slider.getAttribute("aria-label")).toContain("Modern Living Room");
    await slider.focus();
    await page.keyboard.press("ArrowRight");
    expect(await slider.getAttribute("aria-valuenow")).toBe("55");
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    expect(await slider.getAttribute("aria-valuenow")).toBe("40");
    const shown = await page
      .locator("#before-after-gallery [data-rcs=root]")
      .evaluate((el) => (el as HTMLElement).style.getPropertyValue("--rcs-raw-position"));
    expect(shown).toBe("40%");
    page.assertClean();
  });

  it("reveals the feature cards once they scroll into view, and never hides them without motion or JavaScript", async () => {
    const ctx = await b.newContext({ viewport: { width: 1280, height: 600 } });
    const page = await b.newPage(ctx);
    await hydrated(page, "/");
    const cards = page.getByTestId("feature-cards");
    await page.waitForFunction(() =>
      document.querySelector("[data-testid=feature-cards]")?.getAttribute("data-reveal"),
    );
    expect(await cards.getAttribute("data-reveal")).toBe("hidden");
    await cards.scrollIntoViewIfNeeded();
    await page.waitForSelector("[data-testid=feature-cards][data-reveal=shown]");
    expect(await cards.locator("li").count()).toBe(7);

    const calm = await b.newPage(
      await b.newContext({ viewport: { width: 1280, height: 600 }, reducedMotion: "reduce" }),
    );
    await hydrated(calm, "/");
    expect(await calm.getByTestId("feature-cards").getAttribute("data-reveal")).toBeNull();

    const noJs = await b.newPage(await b.newContext({ javaScriptEnabled: false }));
    await noJs.goto("/");
    expect(await noJs.getByTestId("feature-cards").getAttribute("data-reveal")).toBeNull();
    expect(await noJs.getByText("Instant Preview").isVisible()).toBe(true);
    page.assertClean();
  });

  it("sends 'Start Staging Now' and 'Get Started' to sign-up, or to the dashboard for someone with credits", async () => {
    const anon = await b.newPage();
    await hydrated(anon, "/");
    expect(await anon.getByRole("link", { name: "Start Staging Now" }).getAttribute("href")).toBe("/auth");
    expect(await anon.getByRole("link", { name: "Get Started" }).first().getAttribute("href")).toBe("/auth");

    // "/" is a prerendered file (docs/decisions/0145): the signed-in hint, left by any page the Worker renders for
    // them, sends the links to the dashboard.
    const user = await createUser({ credits: 3 });
    const page = await b.newPage(await signedInContext(b, user));
    await page.goto("/dashboard");
    await hydrated(page, "/");
    expect(await page.getByRole("link", { name: "Start Staging Now" }).getAttribute("href")).toBe("/dashboard");
    expect(await page.getByRole("link", { name: "Get Started" }).first().getAttribute("href")).toBe("/dashboard");

    const broke = await createUser({ credits: 0 });
    const page2 = await b.newPage(await signedInContext(b, broke));
    await page2.goto("/plans");
    await hydrated(page2, "/");
    expect(await page2.getByRole("link", { name: "Start Staging Now" }).getAttribute("href")).toBe("/auth");
    page.assertClean();
  });

  it("scrolls to a section from the footer of another page", async () => {
    const page = await b.newPage();
    await hydrated(page, "/blog");
    await page.getByRole("contentinfo").getByRole("link", { name: "Features" }).click();
    await page.waitForURL(`${baseUrl()}/`);
    await page.waitForFunction(() => {
      const top = document.getElementById("features")?.getBoundingClientRect().top ?? -1;
      return top >= 0 && top < 120;
    });
    await page.getByRole("contentinfo").getByRole("link", { name: "Gallery" }).click();
    await page.waitForFunction(() => {
      const top = document.getElementById("before-after-gallery")?.getBoundingClientRect().top ?? -1;
      return top >= 0 && top < 120;
    });
    page.assertClean();
  });

  it("opens the mobile menu at 390 px with every item, and closes it after a choice", async () => {
    const ctx = await b.newContext({ viewport: { width: 390, height: 844 } });
    const page = await b.newPage(ctx);
    await hydrated(page, "/");
    const menu = page.getByTestId("mobile-menu");
    expect(await menu.isVisible()).toBe(false);
    await page.getByLabel("Menu").click();
    expect(await menu.isVisible()).toBe(true);
    const items = await menu.locator("a:visible, button:visible").allTextContents();
    expect(items.map((t) => t.trim())).toEqual(["Features", "Gallery", "Pricing", "Login", "Get Started"]);
    await menu.getByRole("link", { name: "Gallery" }).click();
    expect(await menu.isVisible()).toBe(false);
    await page.waitForFunction(() => {
      const top = document.getElementById("before-after-gallery")?.getBoundingClientRect().top ?? -1;
      return top >= 0 && top < 120;
    });
    page.assertClean();
  });
});

describe("the gallery", () => {
  it("ships every picture with its size, lazily below the fold, from our own origin", async () => {
    const page = await b.newPage();
    await hydrated(page, "/gallery");
    const imgs = await page.locator("main img").evaluateAll((els) =>
      (els as HTMLImageElement[]).map((img) => ({
        src: img.getAttribute("src") ?? "",
        srcset: img.getAttribute("srcset") ?? "",
        width: img.getAttribute("width"),
        height: img.getAttribute("height"),
        loading: img.getAttribute("loading"),
      })),
    );
    expect(imgs).toHaveLength(10);
    for (const img of imgs) {
      expect(img.width).toBe("1440");
      expect(img.height).toBe("960");
      expect(img.src.startsWith("/gallery/")).toBe(true);
      expect(img.srcset.split(", ")).toHaveLength(4); // 480, 720, 960 and 1440 px
    }
    expect(imgs.slice(2).every((i) => i.loading === "lazy")).toBe(true);
    const files = new Set(imgs.flatMap((i) => i.srcset.split(", ").map((s) => s.split(" ")[0]!)));
    for (const file of files) {
      const res = await fetch(`${baseUrl()}${file}`);
      expect(res.headers.get("Content-Type")).toBe("image/jpeg");
      expect((await res.arrayBuffer()).byteLength).toBeLessThan(60 * 1024);
    }
    page.assertClean();
  });

  it("says the video is coming instead of showing an empty player", async () => {
    const page = await b.newPage();
    await hydrated(page, "/gallery");
    expect(await page.locator("video").count()).toBe(0);
    expect(await page.getByText("Video coming soon").isVisible()).toBe(true);
  });
});

async function mailbox(): Promise<{ to: string[]; subject: string; text: string }[]> {
  const ports = inject("ports");
  const res = await fetch(`http://127.0.0.1:${ports.mail}/_emulator/emails`);
  return (await res.json()) as { to: string[]; subject: string; text: string }[];
}

describe("the contact form", () => {
  it("sends a message from the modal to the support address, shown in /dev/mailbox", async () => {
    const stamp = crypto.randomUUID().slice(0, 8);
    const page = await b.newPage();
    await hydrated(page, "/gallery");
    const supportEmail = await page.getByRole("contentinfo").locator("a[href^='mailto:']").textContent();
    expect(supportEmail).toContain("@");
    await page.getByRole("link", { name: "Contact Us" }).click();
    const dialog = page.locator("dialog:modal");
    await dialog.waitFor();
    expect(await dialog.evaluate((el) => Math.round(el.getBoundingClientRect().width))).toBe(384);
    await dialog.getByLabel("Name").fill(`Dana ${stamp}`);
    await dialog.getByLabel("Email").fill(`dana-${stamp}@example.test`);
    await dialog.getByLabel("Message").fill(`Do you offer bulk pricing? ref ${stamp}`);
    await dialog.getByRole("button", { name: "Send Message" }).click();
    await dialog.getByTestId("contact-sent").waitFor();
    expect(await dialog.getByTestId("contact-sent").textContent()).toContain(`Thank you, Dana ${stamp}!`);
    await expect.poll(() => dialog.getByLabel("Message").inputValue()).toBe("");

    await page.goto("/dev/mailbox");
    const mail = page.getByTestId("mail").filter({ hasText: `ref ${stamp}` });
    expect(await mail.count()).toBe(1);
    expect(await mail.textContent()).toContain(`Contact form: Dana ${stamp}`);
    const sent = (await mailbox()).find((m) => m.text.includes(`ref ${stamp}`));
    expect(sent?.to).toEqual([supportEmail]);

    await hydrated(page, "/gallery");
    await page.getByRole("link", { name: "Contact Us" }).click();
    await page.keyboard.press("Escape");
    expect(await page.locator("dialog:modal").count()).toBe(0);
    page.assertClean();
  });

  it("works without JavaScript: the button opens the form, which posts and answers on the page", async () => {
    const stamp = crypto.randomUUID().slice(0, 8);
    const page = await b.newPage(await b.newContext({ javaScriptEnabled: false }));
    await page.goto("/gallery");
    await page.getByRole("link", { name: "Contact Us" }).click();
    await page.waitForURL(/\/gallery\?contact=1/);
    const dialog = page.locator("dialog[open]");
    await dialog.getByLabel("Name").fill(`NoJS ${stamp}`);
    await dialog.getByLabel("Email").fill(`nojs-${stamp}@example.test`);
    await dialog.getByLabel("Message").fill(`Plain form ${stamp}`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      dialog.getByRole("button", { name: "Send Message" }).click(),
    ]);
    expect(response.status()).toBe(200);
    await page.locator("dialog[open]").getByTestId("contact-sent").waitFor();
    expect((await mailbox()).some((m) => m.text.includes(`Plain form ${stamp}`))).toBe(true);
  });

  it("answers invalid input with 400 and a message next to each field, and sends nothing", async () => {
    const before = (await mailbox()).length;
    const res = await fetch(`${baseUrl()}/gallery?contact=1`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ name: "", email: "nope", message: "" }),
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain("Please enter your name.");
    expect(html).toContain("Please enter a valid e-mail address.");
    expect(html).toContain("Please write a message.");
    expect(html).toMatch(
      /aria-invalid="true"[^>]*aria-describedby="contact-email-error"|aria-describedby="contact-email-error"[^>]*aria-invalid="true"/,
    );
    expect((await mailbox()).length).toBe(before);
  });
});
