import { afterAll, afterEach, beforeEach } from "vitest";
import { removeFixtureUsers, takeCreatedUsers } from "./fixtures.ts";

// Every e2e file: the users a test makes (in the test or its beforeEach) are removed after that test, with their
// photos and bytes; users made in beforeAll serve the whole file and are removed after it. Registered before the
// file's own hooks, so this afterEach runs after theirs (hooks run as a stack).

const fileUsers: ReturnType<typeof takeCreatedUsers> = [];

beforeEach(() => {
  fileUsers.push(...takeCreatedUsers());
});

afterEach(async () => {
  await removeFixtureUsers(takeCreatedUsers());
});

afterAll(async () => {
  await removeFixtureUsers([...fileUsers.splice(0), ...takeCreatedUsers()]);
});
