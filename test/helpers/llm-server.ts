/** An OpenAI-compatible LLM for the AI tests: a real HTTPS server on loopback, and adapters pointed at it. */
import { afterAll, beforeAll } from 'vitest';
import { OpenAiAdapter, type OpenAiAdapterOptions } from '../../src/ai/openai-adapter.ts';
import { startHttpsServer, type TestHttpsServer } from './https-server.ts';

/**
 * Registers the server's start and stop (and the adapters' close) as hooks of the enclosing `describe`. `make` gives an
 * adapter for `{origin}/v1` with key `sk-test` and model `test-model`, options overridden.
 */
export function useLlmServer() {
  let server: TestHttpsServer | undefined;
  const adapters: OpenAiAdapter[] = [];
  beforeAll(async () => {
    server = await startHttpsServer();
  });
  afterAll(async () => {
    // The server first: it destroys its sockets, so an adapter's close does not wait on a response a test left open
    // (a server that keeps the connection after [DONE]); the other way round this file's hooks waited 60 s.
    await server?.close();
    await Promise.all(adapters.map((a) => a.close()));
  });
  return {
    get llm(): TestHttpsServer {
      if (!server) throw new Error('the LLM server starts in beforeAll');
      return server;
    },
    make(options: Partial<OpenAiAdapterOptions> = {}): OpenAiAdapter {
      const adapter = new OpenAiAdapter({ baseUrl: `${this.llm.origin}/v1`, apiKey: 'sk-test', model: 'test-model', ...options });
      adapters.push(adapter);
      return adapter;
    },
  };
}
