/** Tools of protocol §2.3–§2.5 as the rest of the service sees them. */
import type { FailureReason } from '../errors.ts';

/** A tool of the manifest that passed validation (protocol §2.3). */
export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON Schema object: type object, properties, required. */
  parameters: Record<string, unknown>;
}

export interface ManifestProblem {
  /** Index in the manifest's tools array, when the problem is about one tool. */
  index?: number;
  tool?: string;
  field: string;
  message: string;
}

export interface ToolManifest {
  tools: ToolSpec[];
  /** Every problem found; a bad tool is dropped with its problem, the others stay usable. */
  problems: ManifestProblem[];
  /** ms since epoch. */
  fetchedAt: number;
  /** 'ok': fetched and parsed; otherwise why there are no tools (the manifest could not be fetched or read). */
  status: 'ok' | 'unavailable';
  /** When status is 'unavailable': a sentence for people. */
  error?: string;
}

/** One call the AI asked for. */
export interface ToolInvocation {
  /** The AI's call id (OpenAI tool_call id), echoed in the result. */
  id: string;
  name: string;
  args: unknown;
}

/** What became of one call; `content` is what the AI sees. */
export interface ToolOutcome {
  id: string;
  name: string;
  ok: boolean;
  /** ok: the result as JSON text cut to its first 6000 characters (protocol §2.5, §8); not ok: the error text. */
  content: string;
  /** Why it failed, when it did: the integrator said ok false, or the call never happened / failed on our side. */
  failure?: Extract<FailureReason, 'tool_error' | 'unknown_tool' | 'invalid_args' | 'timeout' | 'status' | 'invalid_response' | 'refused_address' | 'tls' | 'connection' | 'aborted' | 'invalid_url'>;
  latencyMs: number;
  httpStatus: number | null;
}

/** The port the session runtime uses; the tools client implements it. */
export interface ToolsPort {
  /**
   * The manifest, from the 10-minute cache when fresh (protocol §4.3). Never throws: an unreachable manifest is status
   * 'unavailable'. `waitMs`: how long this caller waits for a fetch (the fetch itself goes on and fills the cache).
   */
  manifest(workspaceId: string, credentials: { endpointUrl: string; key: string }, signal?: AbortSignal, waitMs?: number): Promise<ToolManifest>;
  /** Checks the arguments against the tool's schema, then POSTs the signed call (protocol §4.4). Never throws. */
  call(
    workspaceId: string,
    credentials: { endpointUrl: string; key: string },
    call: ToolInvocation & { language: string; conversationId: string },
    signal?: AbortSignal,
  ): Promise<ToolOutcome>;
  /** Forget the cached manifest (the integration changed). */
  invalidate(workspaceId: string): void;
}
