/**
 * The receiver kit for integrators (package export "botlink/receiver"): verify that a request really comes from the
 * service (protocol §5.5) and type what it carries (protocol §2). Our own tests use it to play the integrator.
 *
 * The kit depends on nothing of the service but src/botlink/signing.ts and src/limits.ts (and the types of node and
 * express), so it can be copied into an integrator's code base as it is: this folder plus those two files.
 * See docs/integrators.md.
 */
export { verifyChannelRequest, verifyToolsRequest, checkChannelRequest } from './verify.ts';
export type { VerifyFailure, VerifyOptions, VerifyResult } from './verify.ts';
export { channelReceiver, toolsReceiver, RECEIVER_MAX_BODY_BYTES } from './express.ts';
export type { ReceiverOptions, RejectReason } from './express.ts';
export type {
  ChannelRequestBody,
  ChannelResponseBody,
  ToolCallRequestBody,
  ToolCallResponseBody,
  ToolDefinition,
  ToolManifestBody,
} from './types.ts';
export { signChannelBody, signToolsRequest, signaturesEqual } from '../botlink/signing.ts';
export { SENT_AT_HEADER, SIGNATURE_HEADER } from '../limits.ts';
