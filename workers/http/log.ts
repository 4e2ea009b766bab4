// The structured logger, for the routes (which reach the server through workers/http and services only).
export { log } from "@workers/lib/log";
