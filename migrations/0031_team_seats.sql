-- A team's seats as Stripe's signed webhook tells them, applied by the team's Durable Object
-- (docs/decisions/0291-seat-facts-applied-by-the-team-object.md). Times are unix epoch ms.

-- Stripe's time of the fact that last set `seats`, and of the one that last froze or thawed the pool: an older event
-- arriving late does not undo a newer one. `frozen_at` stays this object's clock (when the pool stopped).
ALTER TABLE teams ADD COLUMN seats_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE teams ADD COLUMN frozen_changed_at INTEGER NOT NULL DEFAULT 0;
-- The declined invoice that froze the pool: paying it thaws the pool.
ALTER TABLE teams ADD COLUMN failed_invoice TEXT;

-- Each invoice fact applied to a team, once: `<invoiceId>` for a paid invoice (period or seat change),
-- `failed:<invoiceId>` for a declined one. Written in the same batch as its grant, seats and freeze.
CREATE TABLE team_seat_facts (
  key TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('period_paid', 'seats_changed', 'payment_failed')),
  event_id TEXT NOT NULL,
  applied_at INTEGER NOT NULL
);
CREATE INDEX team_seat_facts_team ON team_seat_facts (team_id, applied_at);

-- What every member is told about the team's billing (a declined payment, a recovered one): one row per member and
-- notice, written in the same batch as the freeze or thaw, sent by the team's object afterwards (and by its alarm
-- when the mail service failed). UNIQUE: a member is told each notice once.
CREATE TABLE team_notices (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  notice_key TEXT NOT NULL,
  user_id TEXT NOT NULL,
  email TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('payment_failed', 'payment_recovered')),
  subject TEXT NOT NULL,
  body_text TEXT NOT NULL,
  body_html TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  sent_at INTEGER,
  UNIQUE (notice_key, user_id)
);
CREATE INDEX team_notices_unsent ON team_notices (team_id, sent_at);
