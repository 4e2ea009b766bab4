import { describe, expect, it } from "vitest";
import type { JobBody } from "~/lib/use-job";
import { JobRequest } from "~/shared/job-request";

// The browser's job body is the request schema's input type (app/shared/job-request.ts, issue 48 item 1): a
// misspelled or unknown field fails `npm run typecheck` here, through the @ts-expect-error lines, before any page
// sends it. The runtime half: what the compiler lets through, the server's schema reads the same way.

describe("the browser's job body", () => {
  it("is typed from the request schema: a misspelled field or an unknown kind does not compile", () => {
    const good: JobBody = { kind: "stage", roomType: "Bedroom", designStyle: "Modern", variations: 2 };
    // @ts-expect-error roomTyp is not a field of a job request
    const misspelled: JobBody = { kind: "stage", roomTyp: "Bedroom", designStyle: "Modern" };
    // @ts-expect-error "paint" is not a kind of job
    const unknownKind: JobBody = { kind: "paint" };
    // @ts-expect-error designCreativity is a number, not text
    const wrongType: JobBody = { kind: "stage", designCreativity: "high" };
    expect(JobRequest.safeParse(good).success).toBe(true);
    expect(JobRequest.safeParse(unknownKind).success).toBe(false);
    expect(JobRequest.safeParse(wrongType).success).toBe(false);
    // The schema drops a field it does not know: the compiler is what catches the misspelling.
    expect(JobRequest.parse(misspelled)).not.toHaveProperty("roomTyp");
  });
});
