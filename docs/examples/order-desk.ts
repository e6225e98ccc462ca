/**
 * The reference integrator: an order desk for a small outdoor shop, built on the receiver kit (docs/integrators.md).
 * It is what a customer of Botlink writes: one HTTPS endpoint that answers channel requests (protocol §2.1, §2.2) and a
 * tools manifest with three tools (protocol §2.3–2.5), every request verified with the key Botlink showed.
 *
 * - An order question ("where is order 1001?") is ours: a handled answer from the shop's own records.
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
    '1001': { customer: { name: 'Sheena Nelson', email: 'sheena@example.com' }, items: ['Ridge trail shoes, size 39'], status: 'shipped', carrier: 'PostNL', eta: 'tomorrow before 17:00' },
    '1002': { customer: { name: 'Daan de Vries', email: 'daan@example.nl' }, items: ['Summit 2 tent', 'Alpine sleeping bag'], status: 'being packed', carrier: 'DHL', eta: 'on Thursday' },
    '1234': { customer: { name: 'Alex Morgan', email: 'alex@example.com' }, items: ['Storm rain jacket, size M'], status: 'delivered', carrier: 'PostNL', eta: 'delivered last Monday' },
  } as Record<string, { customer: { name: string; email: string }; items: string[]; status: string; carrier: string; eta: string }>,
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

/** The tools manifest (protocol §2.3): what the AI may ask the shop. */
export const MANIFEST: ToolManifestBody = {
  tools: [
    {
      name: 'order_status',
      description: 'The status and expected delivery of an order, by its order number.',
      parameters: { type: 'object', properties: { order: { type: 'string', description: 'The order number, digits only' } }, required: ['order'] },
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
const ORDER_NUMBER = /\b(\d{4,})\b/;

/** The answer to one channel request (protocol §2.2). */
export function answerChannelRequest(request: ChannelRequestBody): ChannelResponseBody {
  if (DAMAGED.test(request.message)) {
    return { reply: "I'm sorry to hear that.", handled: true, handoff: 'human' };
  }
  const number = ORDER_NUMBER.exec(request.message)?.[1];
  if (number && /\border\b|#/i.test(request.message)) {
    const order = SHOP.orders[number];
    if (!order) return { reply: `I can't find an order ${number}. The number is in your confirmation email.`, handled: true };
    const reply = `Order ${number} (${order.items.join(' and ')}) is ${order.status}; ${order.carrier} delivers it ${order.eta}.`;
    // protocol §2.2: on WhatsApp the customer we recognised is saved with the conversation.
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
      const order = SHOP.orders[number];
      return order ? { ok: true, result: { order: number, items: order.items, status: order.status, carrier: order.carrier, eta: order.eta } } : { ok: false, error: `No order ${number}` };
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
