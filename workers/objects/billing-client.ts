// The subscription rules the billing pages share with the user's object, and the shapes its payment changes take:
// apart from client.ts, so that a staging job's way in does not load them (issue 48, the job files).
export { currentSubscription, LIVE_STATUSES } from "./user/payments/subscriptions";
export type { ApplyResult, PaymentEvent, PaymentFact } from "./user/payments/types";
