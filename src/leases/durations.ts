/**
 * Every lease's length, in one place (docs/reliability.md, "Leases"). A lease is renewed while its work runs (a
 * heartbeat every third of it), so it can be short: work of an engine that died is taken over once its lease ran out,
 * and work of a live engine is never taken over however long it takes (a slow model, tools).
 */

/**
 * A claimed piece of work belongs to its engine this long after the last renewal: a WhatsApp message being answered,
 * its reply being sent, a webhook delivery, a session's turn and a held session (a phone call). Take-over after a
 * crash: at most this plus the backstop poll (1 s), within 30 s. The `LEASE_MS` setting may shorten it for tests.
 */
export const LEASE_MS = 15_000;
/** The shortest lease the `LEASE_MS` setting accepts: a renewal every third of it must fit a slow database round trip. */
export const MIN_LEASE_MS = 1_000;
/** A lease is renewed this often (a third of it): two renewals may fail in a row before it runs out. */
export function renewEveryMs(leaseMs: number): number {
  return Math.round(leaseMs / 3);
}
/**
 * A raw WhatsApp webhook body being read: a few milliseconds of SQL, no network, so it is not renewed; the lease only
 * decides how soon a crashed engine's bodies are read again.
 */
export const EVENT_LEASE_MS = 30_000;
