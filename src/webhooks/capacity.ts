/**
 * The delivery worker's slots: deliveries claimed and not yet answered (queued for a request, or being sent), per
 * endpoint and in all; an answered one waiting for its outcome to be written holds none. The global cap
 * (MAX_IN_FLIGHT) can cut an endpoint's claim short; such an endpoint is remembered as starved and handed to
 * `onFreed` when slots come back.
 */
export function createCapacity(options: { maxInFlight: number; onFreed: (starvedEndpointIds: string[]) => void }) {
  const taken = new Map<string, number>();
  let total = 0;
  const starved = new Set<string>();

  return {
    /** Takes up to `wanted` slots for the endpoint (what the global cap allows); returns how many. */
    claim(endpointId: string, wanted: number): number {
      const allowed = Math.max(0, Math.min(wanted, options.maxInFlight - total));
      if (allowed < wanted) starved.add(endpointId);
      if (allowed > 0) {
        taken.set(endpointId, (taken.get(endpointId) ?? 0) + allowed);
        total += allowed;
      }
      return allowed;
    },

    /** Gives back `n` of the endpoint's slots (all it holds at most); starved endpoints are woken. */
    give(endpointId: string, n: number): void {
      const held = taken.get(endpointId) ?? 0;
      const back = Math.min(held, n);
      if (back === 0) return;
      if (held - back === 0) taken.delete(endpointId);
      else taken.set(endpointId, held - back);
      total -= back;
      if (starved.size > 0) {
        const waiting = [...starved];
        starved.clear();
        options.onFreed(waiting);
      }
    },

    /** Slots the endpoint holds. */
    heldBy(endpointId: string): number {
      return taken.get(endpointId) ?? 0;
    },

    /** Slots taken in all. */
    total(): number {
      return total;
    },
  };
}
