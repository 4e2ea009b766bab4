import { inTeamListing } from "@db/access";
import { inQuery } from "@db/lists";
import { folders, jobs, photos, teams } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { INSUFFICIENT_CREDITS } from "@workers/objects/client";
import { looksOf } from "@workers/services/jobs/looks";
import { type PhotoCard, toCard } from "@workers/services/library";
import { folderLook } from "@workers/services/listing-look";
import type { Deps } from "@workers/services/request-deps";
import { folderAccess, reachablePhoto } from "@workers/services/teams/access";
import { myTeams } from "@workers/services/teams/teams";
import { and, desc, eq, isNull, not } from "drizzle-orm";
import { z } from "zod";
import { DESIGN_STYLES, ROOM_TYPES } from "~/shared/catalog";
import { creditsLabel, MAX_BATCH_PHOTOS, roomField, roomFromName } from "~/shared/listing";
import { BATCH_LOOK_CHOICES, LOOK_STRENGTH_MESSAGE, type LookView, lookStrengthOf } from "~/shared/listing-look";
import { fail, ok, type Result } from "~/shared/result";
import {
  type BatchView,
  chosenPayer,
  FORM_NOT_UNDERSTOOD,
  retryBatch,
  startBatch,
  submissionField,
  viewableBatch,
} from "./batches";

// The /batches pages: which photos a batch may take, each with the room type
// its name (or the user's last choice) suggests, and the start form's fields.
// The form states its credit total and the server starts only that total: a
// form whose selection changed without the total being shown again (no
// JavaScript) is answered with the new total to confirm, not charged.
// docs/decisions/0140-batches-variations-rerolls.md

type Db = Deps["db"];

export interface BatchCandidate {
  photo: PhotoCard;
  /** The room type to preselect: from the name, else the user's last staging choice, else none. */
  roomType: string;
}

export interface BatchForm {
  folder: { id: string; name: string } | null;
  candidates: BatchCandidate[];
  /** The style to preselect: the user's last staging choice. */
  designStyle: string;
  /** More photos than one batch takes: only the newest are offered. */
  truncated: boolean;
  /** Sent back with the form: the same form sent twice starts one batch (listing-jobs.ts, startBatch). */
  submission: string;
  /** The folder's look (a folder's page), and how many of the photos offered follow a look (docs/decisions/0190). */
  look: { view: LookView | null; photos: number };
  /**
   * Who pays (docs/decisions/0318-who-pays-for-a-library-batch.md): the chosen team with its pool, or null for the
   * member's own credits. A team listing's page: its team; the library's page: the picker's choice.
   */
  payer: { teamId: string; name: string; pool: number } | null;
  /** The library's page: the places its batch may be paid from (own credits first, then each team), else empty. */
  payers: { value: string; label: string }[];
}

/**
 * The photos of a folder (or the whole library) a batch may take, newest first, or null for a stranger's folder or a
 * team the user is not an active member of. The library's page offers the photos payable by one place: `paidBy` a
 * team's id (every photo of that team's listings) or absent / "own" (the user's own photos outside team listings).
 */
export async function batchForm(
  db: Db,
  userId: string,
  folderId: string | null,
  paidBy: string | null = null,
): Promise<BatchForm | null> {
  // The user's own folder, or a listing of a team they are an active member of: every photo in it, whoever uploaded
  // it (its batch spends the team's pool, docs/decisions/0310-a-team-listings-batch.md).
  const scope = folderId ? await folderAccess(db, userId, folderId) : null;
  if (folderId && !scope) return null;
  const folder = scope?.folder ?? null;
  // The library's page: the user's teams for the picker, and the one chosen (a folder's page pays where it is).
  const mine = folder ? [] : await myTeams(db, userId);
  const payerChoice = folder ? { team: null } : await chosenPayer(db, userId, paidBy);
  if (!payerChoice) return null;
  const chosen = payerChoice.team;
  const payerTeam = folder?.teamId ?? chosen?.id ?? null;
  const rows = await db
    .select()
    .from(photos)
    .where(
      and(
        isNull(photos.trashedAt),
        folder
          ? and(eq(photos.folderId, folder.id), reachablePhoto(userId))
          : chosen
            ? // The whole library, paid by a team: every photo of its listings, whoever uploaded it (ADR 0318).
              and(inQuery(photos.folderId, teamListings(db, chosen.id)), reachablePhoto(userId))
            : // The whole library: the user's own photos outside team listings, one payer for the batch (ADR 0310).
              and(eq(photos.userId, userId), not(inTeamListing())),
      ),
    )
    .orderBy(desc(photos.createdAt), desc(photos.id))
    .limit(MAX_BATCH_PHOTOS + 1)
    .all();
  const last = await db
    .select({ params: jobs.params })
    .from(jobs)
    .where(and(eq(jobs.userId, userId), eq(jobs.kind, "stage")))
    .orderBy(desc(jobs.createdAt))
    .limit(1)
    .get();
  const lastRoom = ROOM_TYPES.some((r) => r.code === last?.params.roomType) ? last!.params.roomType! : "";
  const lastStyle = DESIGN_STYLES.some((s) => s.code === last?.params.designStyle) ? last!.params.designStyle! : "";
  const offered = rows.slice(0, MAX_BATCH_PHOTOS);
  // A team listing's photos follow the look of the listing's folder, read under its owner (ADR 0280); the library's
  // team choice reads each photo's under its uploader.
  const lookOwner = scope?.ownerId ?? userId;
  const byOwner = new Map<string, string[]>();
  for (const p of offered) {
    const owner = folder ? lookOwner : p.userId;
    const ids = byOwner.get(owner);
    if (ids) ids.push(p.id);
    else byOwner.set(owner, [p.id]);
  }
  let looking = 0;
  for (const [owner, ids] of byOwner) looking += (await looksOf(db, owner, ids)).size;
  const pool = payerTeam
    ? await db.select({ name: teams.name, credits: teams.credits }).from(teams).where(eq(teams.id, payerTeam)).get()
    : undefined;
  return {
    folder: folder ? { id: folder.id, name: folder.name } : null,
    candidates: offered.map((p) => ({ photo: toCard(p), roomType: roomFromName(p.name) ?? lastRoom })),
    designStyle: lastStyle,
    truncated: rows.length > MAX_BATCH_PHOTOS,
    submission: randomToken(),
    look: { view: folder?.lookVersionId ? await folderLook(db, lookOwner, folder.id) : null, photos: looking },
    payer: payerTeam && pool ? { teamId: payerTeam, name: pool.name, pool: pool.credits } : null,
    payers:
      mine.length > 0
        ? [{ value: "own", label: "My own credits" }, ...mine.map((t) => ({ value: t.id, label: `${t.name}'s pool` }))]
        : [],
  };
}

/** The listings (folders) of a team, as a subquery. */
function teamListings(db: Db, teamId: string) {
  return db.select({ id: folders.id }).from(folders).where(eq(folders.teamId, teamId));
}

const startFields = z.object({
  folderId: z.string().max(64).optional(),
  designStyle: z.string().max(100).optional(),
  /**
   * The credit total the person was shown when pressing Start. Only compared with the photos picked: a total over
   * the largest batch is answered by that limit's own message below, not as a form not understood.
   */
  quoted: z.coerce.number().int().min(0).optional(),
  /** The form's submission key (checked by startBatch). */
  submission: z.string().max(64).optional(),
  /** Where the library's batch is paid from (checked by startBatch): "own" or a team's id. */
  paidBy: z.string().max(64).optional(),
  /** Whether the photos follow their listing's look in this batch, and how closely ("": each listing's own). */
  look: z.enum(BATCH_LOOK_CHOICES).optional(),
  lookStrength: z.string().max(8).optional(),
});

export type StartBatchAnswer =
  | { started: true; batchId: string }
  | {
      started: false;
      /** The total to confirm, with the form's choices so the page shows them again as they were. */
      confirm: {
        count: number;
        message: string;
        picked: string[];
        rooms: Record<string, string>;
        designStyle: string;
        look: string;
        lookStrength: string;
      };
    };

/**
 * Starts the batch the form describes, or asks to confirm a total that was not
 * the one shown. Every photo must have a room type; one style for all.
 */
export async function startBatchFromForm(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  fields: Record<string, string>,
): Promise<Result<StartBatchAnswer>> {
  const parsed = startFields.safeParse(fields);
  if (!parsed.success) return fail("invalid", FORM_NOT_UNDERSTOOD);
  const strengthField = parsed.data.lookStrength ?? "";
  const lookStrength = strengthField === "" ? undefined : lookStrengthOf(strengthField);
  if (lookStrength === null) return fail("invalid", LOOK_STRENGTH_MESSAGE);
  const items: { photoId: string; roomType: string }[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (!name.startsWith("pick:") || value !== "1") continue;
    const photoId = name.slice(5);
    const roomType = fields[roomField(photoId)] ?? "";
    if (!roomType) return fail("invalid", "Choose a room type for every photo you picked.");
    items.push({ photoId, roomType });
  }
  if (items.length === 0) return fail("invalid", "Choose at least one photo.");
  if (items.length > MAX_BATCH_PHOTOS) return fail("invalid", `A batch takes at most ${MAX_BATCH_PHOTOS} photos.`);
  if (parsed.data.quoted !== items.length) {
    return ok({
      started: false as const,
      confirm: {
        count: items.length,
        message: `You picked ${items.length} ${items.length === 1 ? "photo" : "photos"}: ${creditsLabel(items.length)}. Press Start again to confirm.`,
        picked: items.map((i) => i.photoId),
        rooms: Object.fromEntries(items.map((i) => [i.photoId, i.roomType])),
        designStyle: parsed.data.designStyle ?? "",
        look: parsed.data.look ?? "listing",
        lookStrength: strengthField,
      },
    });
  }
  const res = await startBatch(deps, userId, {
    folderId: parsed.data.folderId || null,
    designStyle: parsed.data.designStyle ?? "",
    items,
    ...(parsed.data.submission ? { submission: parsed.data.submission } : {}),
    ...(parsed.data.paidBy ? { paidBy: parsed.data.paidBy } : {}),
    ...(parsed.data.look ? { look: parsed.data.look } : {}),
    ...(lookStrength !== undefined ? { lookStrength } : {}),
  });
  if (!res.ok) {
    // The member's own credits short, said with what they have; a team listing's pool or the member's limit in it
    // answers in its own words (docs/decisions/0310-a-team-listings-batch.md).
    if (res.code === "insufficient_credits" && res.error === INSUFFICIENT_CREDITS) {
      const have = (res as { credits?: number }).credits ?? 0;
      return { ...res, error: `Not enough credits: this batch needs more than the ${have} you have.` };
    }
    return res;
  }
  return ok({ started: true as const, batchId: res.batchId });
}

/**
 * A batch's progress page: the batch, and the key its retry form sends back (retryBatch). The member's own, or a team
 * batch seen by an active member of its team (docs/decisions/0317-teammates-see-a-team-batch.md): `startedBy` names
 * the member for a teammate (null for one's own), who sees no retry form.
 */
export async function batchPage(
  db: Db,
  userId: string,
  batchId: string,
): Promise<{ batch: BatchView; submission: string; startedBy: string | null } | null> {
  const found = await viewableBatch(db, userId, batchId);
  if (!found) return null;
  return { batch: found.view, submission: randomToken(), startedBy: found.mine ? null : found.startedBy };
}

const retryFields = z.object({ submission: submissionField });

/** The progress page's retry form: its submission key, when sent, must be one the page minted. */
export async function retryBatchFromForm(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  batchId: string,
  fields: Record<string, string>,
): Promise<Result<{ retried: number; credits: number; replayed?: boolean }>> {
  const parsed = retryFields.safeParse(fields);
  if (!parsed.success) return fail("invalid", FORM_NOT_UNDERSTOOD);
  return retryBatch(deps, userId, batchId, parsed.data.submission);
}

export { recentBatches } from "./batches";
