import { checkMethod, readBytes, readForm, readFormFields, readJson, readText } from "@workers/http/body";
import { allowedMethods } from "@workers/http/methods";
import { STATUS } from "@workers/http/result";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const url = "http://localhost/x";
const schema = z.object({ name: z.string().min(2, "Name is too short."), age: z.coerce.number().int().optional() });

function chunked(bytes: number, chunk = 16 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const n = Math.min(chunk, bytes - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x61));
    },
  });
}

describe("readForm", () => {
  it("reads a urlencoded form and a multipart form", async () => {
    const a = await readForm(
      new Request(url, {
        method: "POST",
        body: "name=Alice&age=3",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      }),
      schema,
    );
    expect(a).toEqual({ ok: true, data: { name: "Alice", age: 3 } });
    const fd = new FormData();
    fd.set("name", "Bob");
    const b = await readForm(new Request(url, { method: "POST", body: fd }), schema);
    expect(b).toEqual({ ok: true, data: { name: "Bob" } });
  });

  it("refuses a wrong media type with 415, a missing boundary with 400", async () => {
    for (const type of ["text/plain", "application/json", ""]) {
      const r = await readForm(
        new Request(url, { method: "POST", body: "name=Al", headers: { "Content-Type": type } }),
        schema,
      );
      expect(r.ok || STATUS[r.code]).toBe(415);
    }
    const noBoundary = await readForm(
      new Request(url, { method: "POST", body: "--x\r\n", headers: { "Content-Type": "multipart/form-data" } }),
      schema,
    );
    expect(noBoundary.ok || STATUS[noBoundary.code]).toBe(400);
    const broken = await readForm(
      new Request(url, {
        method: "POST",
        body: "garbage",
        headers: { "Content-Type": "multipart/form-data; boundary=zz" },
      }),
      schema,
    );
    expect(broken.ok || STATUS[broken.code]).toBe(400);
  });

  it("refuses PATCH, PUT and DELETE with 405", async () => {
    for (const method of ["PATCH", "PUT", "DELETE"]) {
      const r = await readFormFields(
        new Request(url, { method, body: "a=b", headers: { "Content-Type": "application/x-www-form-urlencoded" } }),
      );
      expect(r.ok || STATUS[r.code]).toBe(405);
    }
    expect(checkMethod(new Request(url, { method: "POST" }))).toBeNull();
  });

  it("gives each broken field its own message", async () => {
    const r = await readForm(
      new Request(url, {
        method: "POST",
        body: "name=A",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      }),
      schema,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe("invalid");
      expect(r.fieldErrors).toEqual({ name: "Name is too short." });
      expect(r.error).toBe("Name is too short.");
    }
  });
});

describe("body limits", () => {
  it("refuses a declared length over the limit with 413", async () => {
    const r = await readBytes(
      new Request(url, { method: "POST", body: "x".repeat(100), headers: { "Content-Length": "100" } }),
      10,
    );
    expect(r.ok || STATUS[r.code]).toBe(413);
  });

  it("refuses a chunked body over the limit with 413 while it streams", async () => {
    const r = await readJson(
      new Request(url, {
        method: "POST",
        body: chunked(200 * 1024),
        headers: { "Content-Type": "application/json" },
        duplex: "half",
      } as RequestInit),
      z.object({}),
    );
    expect(r.ok || STATUS[r.code]).toBe(413);
  });

  it("reads a chunked body under the limit", async () => {
    const r = await readText(
      new Request(url, { method: "POST", body: chunked(1000, 100), duplex: "half" } as RequestInit),
    );
    expect(r.ok && r.text.length).toBe(1000);
  });
});

describe("readJson", () => {
  const post = (body: string, type = "application/json") =>
    new Request(url, { method: "POST", body, headers: { "Content-Type": type } });
  it("reads a JSON object checked by its schema", async () => {
    expect(await readJson(post('{"name":"Ann"}'), schema)).toEqual({ ok: true, data: { name: "Ann" } });
  });
  it("refuses malformed JSON with 400, a form body with 415", async () => {
    const bad = await readJson(post("{oops"), schema);
    expect(bad.ok || [STATUS[bad.code], bad.error]).toEqual([400, "The request body must be a JSON object."]);
    const form = await readJson(post("name=Ann", "application/x-www-form-urlencoded"), schema);
    expect(form.ok || STATUS[form.code]).toBe(415);
    const invalidUtf8 = await readJson(
      new Request(url, {
        method: "POST",
        body: new Uint8Array([0x7b, 0xff, 0x7d]),
        headers: { "Content-Type": "application/json" },
      }),
      schema,
    );
    expect(invalidUtf8.ok || STATUS[invalidUtf8.code]).toBe(400);
  });
});

describe("allowedMethods", () => {
  const routes = [
    { method: "GET", path: "/api/photos/:id" },
    { method: "DELETE", path: "/api/photos/:id" },
    { method: "PUT", path: "/api/uploads/:id/chunks/:index{[0-9]{1,5}}" },
    { method: "ALL", path: "/api/*" },
  ];
  it("lists the methods a known path takes", () => {
    expect(allowedMethods(routes, "/api/photos/abc").sort()).toEqual(["DELETE", "GET", "HEAD"]);
    expect(allowedMethods(routes, "/api/uploads/u1/chunks/12")).toEqual(["PUT"]);
    expect(allowedMethods(routes, "/api/uploads/u1/chunks/x")).toEqual([]);
    expect(allowedMethods(routes, "/api/nothing")).toEqual([]);
  });
});
