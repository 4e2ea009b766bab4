import type { Database } from "@db/client";
import { z } from "zod";
import { ok, type Result } from "~/shared/result";
import { listingInput, saveListing, setListingStatus, statusInput } from "./listing-status";

// The listing's forms on a folder's page of /dashboard (docs/decisions/0170-mls-profiles.md): its details and MLS
// profile, and its status. Plain web forms (they work without JavaScript), each a closed intent checked here with
// a message per field; the route only reads the form and shows the answer.

const folderId = z
  .string({ message: "That listing was not found." })
  .regex(/^[a-z0-9]{1,64}$/, "That listing was not found.");

export const listingActionInput = z.discriminatedUnion("intent", [
  listingInput.extend({ intent: z.literal("listing"), folderId, profile: listingInput.shape.profile.default("") }),
  statusInput.extend({ intent: z.literal("listing-status"), folderId }),
]);

export const LISTING_INTENTS: ReadonlySet<string> = new Set(["listing", "listing-status"]);

export async function runListingAction(
  deps: { db: Database; clock: () => number },
  userId: string,
  input: z.infer<typeof listingActionInput>,
): Promise<Result<{ message: string }>> {
  if (input.intent === "listing") {
    const res = await saveListing(deps.db, userId, input.folderId, input);
    return res.ok ? ok({ message: "Listing details saved." }) : res;
  }
  return setListingStatus(deps.db, userId, input.folderId, input, deps.clock());
}
