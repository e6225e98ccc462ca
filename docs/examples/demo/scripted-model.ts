/**
 * A scripted stand-in for an OpenAI-compatible model (`POST /v1/chat/completions`), so the demo shows the AI calling
 * the integrator's tools without installing or paying for a model. Botlink talks to it exactly as to OpenAI, vLLM or
 * Ollama (LLM_BASE_URL); it answers in plain JSON (not streamed), which Botlink reads as any server that does not
 * stream (docs/phone.md, "Streamed replies").
 *
 * What it "understands" is a few patterns, enough for the demo's customers: an opening-hours question calls
 * opening_hours, "do you have …" calls product_search, an order number calls order_status; after a tool round it
 * turns the results into a sentence; otherwise it reads out the best knowledge-base passage it was given. Set
 * LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL) before `npm run demo` to use a real model instead.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

interface ChatRequest {
  messages: Message[];
  tools?: { function: { name: string } }[];
}

type Step = { content: string } | { call: { name: string; args: Record<string, unknown> } };

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
const euro = (amount: unknown) => `€${Number(amount).toFixed(2)}`;

/** What the customer wants, as a tool call, when one of the offered tools fits. */
function toolFor(message: string, offered: Set<string>): Step | null {
  const order = /\border\s*#?\s*(\d{4,})/i.exec(message)?.[1];
  const postcode = /\b(\d{4}\s?[A-Za-z]{2})\b/.exec(order ? message.replace(order, '') : message)?.[1];
  if (order && offered.has('order_status')) return { call: { name: 'order_status', args: { order, ...(postcode ? { postcode } : {}) } } };
  if (/\b(open|opening|hours|close[sd]?)\b/i.test(message) && offered.has('opening_hours')) {
    const day = DAYS.find((d) => message.toLowerCase().includes(d));
    return { call: { name: 'opening_hours', args: day ? { day } : {} } };
  }
  const wanted = /\b(?:sell|have|stock|looking for|buy)\s+(?:any\s+|some\s+|an?\s+|the\s+)?(.+?)(?:\s+in\s+size\s+(\w+))?\s*[?.!]*$/i.exec(message);
  if (wanted && offered.has('product_search')) {
    return { call: { name: 'product_search', args: { query: wanted[1], ...(wanted[2] ? { size: wanted[2] } : {}) } } };
  }
  return null;
}

/** A sentence from one tool result (the JSON text Botlink passes on, or the integrator's error text). */
function sentenceFor(name: string, content: string): string {
  let result: Record<string, unknown>;
  try {
    result = JSON.parse(content) as Record<string, unknown>;
  } catch {
    return "I couldn't look that up just now.";
  }
  if (name === 'order_status') return `Order ${String(result.order)} is ${String(result.status)}; ${String(result.carrier)} delivers it ${String(result.eta)}.`;
  if (name === 'opening_hours') {
    if (typeof result.day === 'string') return result.hours === 'closed' ? `We're closed on ${capital(result.day)}.` : `On ${capital(result.day)} we're open ${String(result.hours)}.`;
    return 'We are open Monday to Saturday; on Thursday until 21:00.';
  }
  if (name === 'product_search') {
    const products = (result.products ?? []) as { name: string; price_eur: number; in_stock: boolean; size_available?: boolean }[];
    const [first] = products;
    if (!first) return "I'm afraid we don't carry that.";
    const size = first.size_available === undefined ? '' : first.size_available ? ', and your size is available' : ', but not in your size';
    const stock = first.in_stock ? '' : ' It is out of stock at the moment.';
    return `We have the ${first.name} for ${euro(first.price_eur)}${size}.${stock}`;
  }
  return 'Done.';
}

/** The first sentences of the best passage, as a grounded answer; an honest "I don't know" without one. */
function answerFromPassages(messages: Message[]): string {
  const passages = messages.find((m) => m.role === 'system' && m.content?.startsWith('Knowledge-base passages'))?.content ?? '';
  const text = /<passage[^>]*>\n([\s\S]*?)\n<\/passage>/.exec(passages)?.[1];
  if (!text) return "I'm not sure about that one. A colleague can help you: just ask for a person.";
  return (text.match(/[^.!?]+[.!?]+/g) ?? [text]).slice(0, 2).join('').trim();
}

/** One step of the conversation, as a model would take it. */
export function scriptedStep(request: ChatRequest): Step {
  const { messages } = request;
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const results = messages.slice(lastUser + 1).filter((m) => m.role === 'tool');
  if (results.length > 0) {
    const names = new Map(messages.flatMap((m) => m.tool_calls ?? []).map((c) => [c.id, c.function.name]));
    return { content: results.map((r) => sentenceFor(names.get(r.tool_call_id ?? '') ?? '', r.content ?? '')).join(' ') };
  }
  const offered = new Set((request.tools ?? []).map((t) => t.function.name));
  return toolFor(messages[lastUser]?.content ?? '', offered) ?? { content: answerFromPassages(messages) };
}

export interface ScriptedModel {
  /** The LLM_BASE_URL to give Botlink: http://127.0.0.1:<port>/v1. */
  baseUrl: string;
  close(): Promise<void>;
}

export async function startScriptedModel(): Promise<ScriptedModel> {
  let callCount = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
      const step = scriptedStep(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest);
      const message =
        'call' in step
          ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${++callCount}`, type: 'function', function: { name: step.call.name, arguments: JSON.stringify(step.call.args) } }] }
          : { role: 'assistant', content: step.content };
      const body = JSON.stringify({
        id: `chatcmpl-demo-${callCount}`,
        object: 'chat.completion',
        model: 'scripted-demo-model',
        choices: [{ index: 0, message, finish_reason: 'call' in step ? 'tool_calls' : 'stop' }],
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
