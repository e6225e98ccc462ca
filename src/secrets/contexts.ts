/**
 * What each stored secret is sealed for (docs/operations.md, "Rotating secrets"): SecretBox binds a sealed value to
 * its context, so a value copied into another row or column does not open. Owned here, below every feature that
 * seals, so the re-seal of a key rotation reads them without importing the features.
 */

/** An integration key, bound to its workspace. */
export const integrationKeyContext = (workspaceId: string): string => `integration-key:${workspaceId}`;

/** A WhatsApp access token, bound to its workspace. */
export const whatsappTokenContext = (workspaceId: string): string => `whatsapp-token:${workspaceId}`;

/** A webhook endpoint's signing secrets (current and previous), bound to the endpoint. */
export const webhookSecretContext = (endpointId: string): string => `webhook-secret:${endpointId}`;
