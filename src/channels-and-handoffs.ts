/**
 * The channels a conversation comes in on and the handoffs an integrator may ask for: shared words of a conversation,
 * owned here rather than by the feature that used them first.
 */

/** protocol §2.1: webchat only from the dashboard test button (and the website chat). */
export const CHANNELS = ['phone', 'whatsapp', 'webchat'] as const;
export type Channel = (typeof CHANNELS)[number];

/** protocol §2.2: 'human' connects the customer to a person (on the phone only while the team is available); 'forward':
 * the team follows up, the customer is told so and the team is notified. */
export type Handoff = 'human' | 'forward';
