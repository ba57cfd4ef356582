/**
 * What the backend reconcilers' unit tests share besides their FakeApiServer
 * (test/support/fake-api-server.ts); their real-cluster tests are in test/integration/backend.
 */

/** An RFC 3339 time `m` minutes ago (negative: in the future). */
export const minutesAgo = (m: number): string => new Date(Date.now() - m * 60_000).toISOString();
