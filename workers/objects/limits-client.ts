// The shared rate limiter as code outside workers/objects reaches it: apart from client.ts, so that a staging job's
// way in, which reaches the user's object through client.ts, does not load the limiter (issue 48, the job files).
export { clientIp, peekLimit, RATE_LIMITED_MESSAGE, type RateRule, rateLimit } from "./rate-limiter";
