/**
 * A scenario's test conversation (docs/scenarios.md): it runs through the real engine, its session is marked with the
 * run (`sessions.test_run_id`, set when the row is made), and it never reaches the team: no inbox change, no
 * notification, no assignment, no webhook, not in the Overview, exports or lists.
 */
export interface TestConversation {
  /** The scenario run it belongs to. */
  runId: string;
  /**
   * Whom the Bot Link and the tools ask: the workspace's endpoint (`live`), nobody (`none`), or a candidate endpoint
   * with the workspace's key. The endpoint's health is neither read nor fed: a test sees the endpoint as it answers.
   */
  integrator: 'live' | 'none' | { endpointUrl: string; key: string };
  /** Tools answered without calling the integrator, by name: the result the AI is given. */
  toolMocks: Readonly<Record<string, unknown>>;
  /**
   * The scenario's customer email and name: on the conversation from its first row on, as a web chat lead's or the
   * integrator's `customer` fields would be (docs/scenarios.md, "The file").
   */
  customer?: { email?: string; name?: string };
}
