/**
 * The reference integrator: an order desk for a small outdoor shop, built on the receiver kit (docs/integrators.md).
 * It is what a customer of Botlink writes: one HTTPS endpoint that answers channel requests (protocol §2.1, §2.2) and a
 * tools manifest with three tools (protocol §2.3–2.5), every request verified with the key Botlink showed.
 *
 * - An order question is ours, and answered only to whoever proves the order is theirs: the order number **and** the
 *   postcode of its delivery address (docs/integrators.md, §3: reveal only what belongs to that customer). The order
 *   number alone gets a request for the postcode; a wrong postcode gets the same answer as an unknown order, so
 *   nobody learns which order numbers exist. The customer's name and email go back to Botlink (saved on the WhatsApp
 *   conversation) only after that proof: before it, we do not know who is writing.
 * - A customer asking for a person ("Can I speak to someone?") never gets here: Botlink hands the conversation over
 *   itself (docs/architecture.md, "Decisions worth knowing"). A complaint about a damaged parcel is ours to hand
 *   over: a short answer with `handoff: "human"`.
 * - Anything else is not ours: `handled: false`, with a line of context the AI may use (protocol §1.3).
 * - Tools for the AI: order_status, product_search, opening_hours.
 *
 * `npm run example:integrator` (docs/examples/integrator.ts) and `npm run demo` (docs/examples/demo/) both serve it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import express from 'express';
import {
  channelReceiver,
  toolsReceiver,
  type ChannelRequestBody,
  type ChannelResponseBody,
  type ToolCallRequestBody,
  type ToolCallResponseBody,
  type ToolManifestBody,
} from '../../src/receiver/index.ts';

/** The shop's records: what a real integrator reads from its own database. */
export const SHOP = {
  name: 'Trailhead Outdoor',
  orders: {
    '1001': { customer: { name: 'Sheena Nelson', email: 'sheena@example.com' }, postcode: '3511AB', items: ['Ridge trail shoes, size 39'], status: 'shipped', carrier: 'PostNL', eta: 'tomorrow before 17:00' },
    '1002': { customer: { name: 'Daan de Vries', email: 'daan@example.nl' }, postcode: '1012JS', items: ['Summit 2 tent', 'Alpine sleeping bag'], status: 'being packed', carrier: 'DHL', eta: 'on Thursday' },
    '1234': { customer: { name: 'Alex Morgan', email: 'alex@example.com' }, postcode: '9711LM', items: ['Storm rain jacket, size M'], status: 'delivered', carrier: 'PostNL', eta: 'delivered last Monday' },
  } as Record<string, Order>,
  products: [
    { sku: 'BT-42', name: 'Granite hiking boots', price_eur: 149.95, sizes: ['40', '41', '42', '43', '44'], in_stock: true, words: ['boots', 'hiking', 'shoes', 'walking'] },
    { sku: 'RS-39', name: 'Ridge trail shoes', price_eur: 119.0, sizes: ['37', '38', '39', '40', '41'], in_stock: true, words: ['shoes', 'trail', 'running'] },
    { sku: 'RJ-M', name: 'Storm rain jacket', price_eur: 189.0, sizes: ['S', 'M', 'L', 'XL'], in_stock: false, words: ['jacket', 'rain', 'waterproof', 'coat'] },
    { sku: 'TN-2', name: 'Summit 2 tent', price_eur: 329.0, sizes: [], in_stock: true, words: ['tent', 'camping'] },
    { sku: 'SB-A', name: 'Alpine sleeping bag', price_eur: 139.0, sizes: [], in_stock: true, words: ['sleeping', 'bag', 'camping'] },
  ],
  openingHours: {
    monday: '09:00–18:00',
    tuesday: '09:00–18:00',
    wednesday: '09:00–18:00',
    thursday: '09:00–21:00',
    friday: '09:00–18:00',
    saturday: '10:00–17:00',
    sunday: 'closed',
  } as Record<string, string>,
};

interface Order {
  customer: { name: string; email: string };
  /** The delivery address's postcode, compared without spaces and case: the caller's proof that the order is theirs. */
  postcode: string;
  items: string[];
  status: string;
  carrier: string;
  eta: string;
}

/** A Dutch postcode (1234 AB) as it is written in a message, normalised: 1234AB. */
const POSTCODE = /\b(\d{4})\s?([A-Za-z]{2})\b/;
export const postcodeIn = (text: string): string | null => {
  const m = POSTCODE.exec(text);
  return m ? `${m[1]}${m[2]!.toUpperCase()}` : null;
};

/** The order when the number and the postcode belong together; null otherwise (unknown and wrong look alike). */
export function provenOrder(number: string, postcode: string | null): Order | null {
  const order = SHOP.orders[number];
  return order && postcode !== null && order.postcode === postcode.replace(/\s/g, '').toUpperCase() ? order : null;
}

/** The tools manifest (protocol §2.3): what the AI may ask the shop. */
export const MANIFEST: ToolManifestBody = {
  tools: [
    {
      name: 'order_status',
      description: 'The status and expected delivery of an order. Needs the order number and the postcode of the delivery address, both from the customer: ask for the postcode when it is missing.',
      parameters: {
        type: 'object',
        properties: { order: { type: 'string', description: 'The order number, digits only' }, postcode: { type: 'string', description: 'The postcode of the delivery address, like 3511 AB' } },
        required: ['order', 'postcode'],
      },
    },
    {
      name: 'product_search',
      description: 'Products of the shop matching a few words (boots, tent, rain jacket), with price, sizes and stock.',
      parameters: { type: 'object', properties: { query: { type: 'string' }, size: { type: 'string' } }, required: ['query'] },
    },
    {
      name: 'opening_hours',
      description: "The shop's opening hours, for one day of the week or for the whole week.",
      parameters: { type: 'object', properties: { day: { type: 'string', description: 'monday … sunday; absent: the whole week' } } },
    },
  ],
};

const DAMAGED = /\b(damaged|broken|kapot|beschadigd)\b/i;
/** The number after "order" or "#": a postcode's four digits elsewhere in the message are not one. */
const ORDER_NUMBER = /(?:\border\b\D{0,12}?|#\s?)(\d{4,})\b/i;

/** The answer to one channel request (protocol §2.2). */
export function answerChannelRequest(request: ChannelRequestBody): ChannelResponseBody {
  if (DAMAGED.test(request.message)) {
    return { reply: "I'm sorry to hear that.", handled: true, handoff: 'human' };
  }
  const number = ORDER_NUMBER.exec(request.message)?.[1];
  if (number) {
    // The order number's digits are not a postcode ("order 1001 on its way" is no 1001 ON).
    const postcode = postcodeIn(request.message.replace(number, ''));
    // Only to whoever proves the order is theirs (docs/integrators.md §3): the number alone tells nothing.
    if (postcode === null) return { reply: `I can look up order ${number} for you. To keep your order private, what is the postcode of the delivery address?`, handled: true };
    const order = provenOrder(number, postcode);
    if (!order) return { reply: `I can't find an order ${number} with that postcode. Both are in your confirmation email.`, handled: true };
    const reply = `Order ${number} (${order.items.join(' and ')}) is ${order.status}; ${order.carrier} delivers it ${order.eta}.`;
    // protocol §2.2: on WhatsApp the customer who proved who they are is saved with the conversation.
    return request.channel === 'whatsapp' ? { reply, handled: true, customer: order.customer } : { reply, handled: true };
  }
  // Not an order question: Botlink's AI answers, and may use this line as context (protocol §1.3).
  return { reply: `${SHOP.name} is an outdoor shop in Utrecht; the caller did not ask about an order.`, handled: false };
}

/** One tool call (protocol §2.4, §2.5). */
export function callTool(call: ToolCallRequestBody): ToolCallResponseBody {
  const args = call.args as Record<string, unknown>;
  switch (call.tool) {
    case 'order_status': {
      const number = String(args.order ?? '').replace(/\D/g, '');
      const postcode = typeof args.postcode === 'string' ? postcodeIn(args.postcode) : null;
      if (postcode === null) return { ok: false, error: 'Ask the customer for the postcode of the delivery address, then call order_status again with it.' };
      const order = provenOrder(number, postcode);
      return order
        ? { ok: true, result: { order: number, items: order.items, status: order.status, carrier: order.carrier, eta: order.eta } }
        : { ok: false, error: `No order ${number} with postcode ${postcode}` };
    }
    case 'product_search': {
      const wanted = String(args.query ?? '').toLowerCase().match(/[a-z]+/g) ?? [];
      const size = typeof args.size === 'string' ? args.size : null;
      const found = SHOP.products
        .filter((p) => wanted.some((w) => p.words.some((pw) => pw.startsWith(w) || w.startsWith(pw))))
        .map(({ words: _words, ...p }) => ({ ...p, ...(size ? { size_available: p.sizes.includes(size) } : {}) }));
      return { ok: true, result: { products: found.slice(0, 3) } };
    }
    case 'opening_hours': {
      const day = typeof args.day === 'string' ? args.day.toLowerCase() : null;
      if (day && SHOP.openingHours[day]) return { ok: true, result: { day, hours: SHOP.openingHours[day] } };
      return { ok: true, result: { week: SHOP.openingHours } };
    }
    default:
      return { ok: false, error: `Unknown tool ${call.tool}` };
  }
}

export interface OrderDeskOptions {
  /** The Bot Link key Botlink showed (at least 32 characters): every request is verified with it. */
  key: string;
  /** Port on 127.0.0.1; default 0 (a free one). */
  port?: number;
  /** PEM certificate and key of the HTTPS server; default the test certificate in test/fixtures/tls. */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

export interface OrderDesk {
  /** The channel endpoint to save in Botlink: https://127.0.0.1:<port>/botlink/channel. */
  endpointUrl: string;
  /** Where Botlink finds the tools (the endpoint's sibling, protocol §4.3): https://127.0.0.1:<port>/botlink/tools. */
  toolsBase: string;
  close(): Promise<void>;
}

const TEST_TLS = new URL('../../test/fixtures/tls/', import.meta.url);

/** Serves the order desk over HTTPS on loopback. */
export async function startOrderDesk(options: OrderDeskOptions): Promise<OrderDesk> {
  const app = express();
  app.post('/botlink/channel', channelReceiver(options.key), (req, res) => {
    res.json(answerChannelRequest(req.body as ChannelRequestBody));
  });
  app.get('/botlink/tools/manifest', toolsReceiver(options.key), (_req, res) => {
    res.json(MANIFEST);
  });
  app.post('/botlink/tools', toolsReceiver(options.key), (req, res) => {
    res.json(callTool(req.body as ToolCallRequestBody));
  });

  const tls = options.tls ?? { cert: readFileSync(new URL('server.pem', TEST_TLS)), key: readFileSync(new URL('server-key.pem', TEST_TLS)) };
  const server: Server = createServer(tls, app);
  const sockets = new Set<Socket>();
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const origin = `https://127.0.0.1:${port}`;
  return {
    endpointUrl: `${origin}/botlink/channel`,
    toolsBase: `${origin}/botlink/tools`,
    async close() {
      // Botlink keeps its connections alive; they would hold close() open.
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
