import { folders } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import type { Deps } from "@workers/services/request-deps";
import { SEATS_RANGE_MESSAGE } from "@workers/services/team-billing";
import { z } from "zod";
import { TEAM_PLAN } from "~/shared/catalog";
import { fail, ok, type Result } from "~/shared/result";
import { RETENTION_MAX_DAYS, RETENTION_MIN_DAYS, TEAM_NAME_MAX } from "~/shared/teams";
import { cleanText } from "~/shared/text";
import { invite, revoke } from "./invitations";
import { createTeamKey, endTeamKeyOldSecret, revokeTeamKey, rotateTeamKeySecret } from "./keys";
import { setRetention } from "./record";
import { changeTeamSeats, openTeamBillingPortal } from "./seats";
import { removeMember, requireTeamRole, setMemberLimit, transferOwnership } from "./teams";

// The team page's form actions (/teams/:teamId), each a closed intent checked here, with its role checked by the
// service it calls: any member makes a shared listing; only the owner or a team admin invites, revokes, removes and
// sets limits, and makes and revokes the team's API keys; only the owner buys or changes seats (an agent is
// answered 403, a stranger 404, nothing written).

const id = z.string().regex(/^[a-z0-9]{1,64}$/);

export const teamNameField = cleanText("Team name", 1, TEAM_NAME_MAX);

export const teamActionInput = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("invite"),
    email: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.email({ message: "Enter a valid e-mail address." }).max(254)),
    role: z.enum(["agent", "team_admin"]).default("agent"),
  }),
  z.object({ intent: z.literal("revoke"), invitationId: id }),
  z.object({ intent: z.literal("remove"), memberId: id }),
  z.object({
    intent: z.literal("transfer"),
    memberId: id,
    confirm: z.literal("on", { error: "Tick the box to confirm you hand the team over." }),
  }),
  z.object({
    intent: z.literal("limit"),
    memberId: id,
    limit: z.union([
      z.literal(""),
      z.string().regex(/^\d{1,6}$/, "Enter a whole number of credits, or leave it empty."),
    ]),
  }),
  z.object({ intent: z.literal("create-listing"), name: cleanText("Listing name", 1, 100) }),
  z.object({
    intent: z.literal("seats"),
    seats: z
      .string()
      .trim()
      .regex(/^\d{1,3}$/, SEATS_RANGE_MESSAGE)
      .transform(Number)
      .refine((n) => n >= TEAM_PLAN.minSeats && n <= TEAM_PLAN.maxSeats, SEATS_RANGE_MESSAGE),
  }),
  z.object({
    intent: z.literal("create-key"),
    name: cleanText("Key name", 1, 60),
    limit: z
      .union([z.literal(""), z.string().regex(/^\d{1,6}$/, "Enter a whole number of credits, or leave it empty.")])
      .default(""),
  }),
  z.object({ intent: z.literal("revoke-key"), keyId: id }),
  z.object({ intent: z.literal("rotate-key-secret"), keyId: id }),
  z.object({ intent: z.literal("end-key-old-secret"), keyId: id }),
  z.object({ intent: z.literal("billing") }),
  z.object({
    intent: z.literal("retention"),
    days: z
      .string()
      .regex(/^\d{1,5}$/, "Enter a whole number of days.")
      .transform(Number)
      .pipe(
        z
          .number()
          .min(RETENTION_MIN_DAYS, `Keep the record at least ${RETENTION_MIN_DAYS} days.`)
          .max(RETENTION_MAX_DAYS, `Keep the record at most ${RETENTION_MAX_DAYS} days.`),
      ),
  }),
]);
export type TeamActionInput = z.infer<typeof teamActionInput>;

export async function runTeamAction(
  deps: Pick<Deps, "db" | "env" | "mailer" | "origin" | "clock" | "stripe">,
  teamId: string,
  userId: string,
  input: TeamActionInput,
): Promise<Result<{ message: string; redirect?: string; token?: string; callbackSecret?: string }>> {
  switch (input.intent) {
    case "invite":
      return invite(deps, teamId, userId, { email: input.email, role: input.role });
    case "revoke":
      return revoke(deps, teamId, userId, input.invitationId);
    case "remove":
      return removeMember(deps, teamId, userId, input.memberId);
    case "transfer":
      return transferOwnership(deps, teamId, userId, input.memberId);
    case "limit":
      return setMemberLimit(deps, teamId, userId, input.memberId, input.limit === "" ? null : Number(input.limit));
    case "create-listing": {
      const found = await requireTeamRole(deps.db, teamId, userId, "member");
      if (!found.ok) return found;
      await deps.db
        .insert(folders)
        .values({ id: randomToken(), userId, teamId, name: input.name, createdAt: deps.clock() });
      return ok({ message: `Listing "${input.name}" created for the team.` });
    }
    case "create-key":
      return createTeamKey(deps, teamId, userId, {
        name: input.name,
        limit: input.limit === "" ? null : Number(input.limit),
      });
    case "revoke-key":
      return revokeTeamKey(deps, teamId, userId, input.keyId);
    case "rotate-key-secret":
      return rotateTeamKeySecret(deps, teamId, userId, input.keyId);
    case "end-key-old-secret":
      return endTeamKeyOldSecret(deps, teamId, userId, input.keyId);
    case "seats":
      return changeTeamSeats(deps, teamId, userId, input.seats);
    case "billing":
      return openTeamBillingPortal(deps, teamId, userId);
    case "retention": {
      const found = await requireTeamRole(deps.db, teamId, userId, "manage");
      if (!found.ok) return found;
      await setRetention(deps.db, teamId, input.days, deps.clock());
      return ok({ message: `The broker's record now keeps what left for ${input.days} days.` });
    }
    default:
      return fail("invalid", "Unknown action.");
  }
}
