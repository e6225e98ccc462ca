/** The guarded outbound HTTP client: every URL an integrator gives us is called through it (protocol §4, §7.2, §8). */
export type { AddressPolicy } from './address-policy.ts';
export { checkUrlSyntax, createAddressPolicy, refusedAddressReason } from './address-policy.ts';
export type {
  GuardedClientOptions,
  GuardedRequest,
  GuardedResponse,
  OutboundFailureReason,
  ResolveHost,
} from './guarded-client.ts';
export { GuardedClient, OutboundError } from './guarded-client.ts';
