/** Scenarios as a test drives them through the API: saved, run, and read back once done. */
import type { TestService } from '../helpers/service.ts';
import { until } from '../channels/whatsapp/fixtures/harness.ts';

/** Saves `definition` (POST /v1/scenarios) and answers its id; throws with the service's answer when refused. */
export async function saveScenario(service: TestService, token: string, definition: unknown): Promise<string> {
  const res = await service.api('POST', '/v1/scenarios', { token, body: definition });
  if (res.status !== 201) throw new Error(`saving the scenario failed: ${res.status} ${res.text}`);
  return res.body.scenario.id as string;
}

/** Runs a saved scenario and waits until its run is done (read from `reader`, default the same engine). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function runScenario(service: TestService, token: string, id: string, body: { runs?: number } = {}, reader: TestService = service): Promise<any> {
  const started = await service.api('POST', `/v1/scenarios/${id}/runs`, { token, body });
  if (started.status !== 202) throw new Error(`starting the run failed: ${started.status} ${started.text}`);
  const runId = started.body.run.id as string;
  return until(async () => {
    const res = await reader.api('GET', `/v1/scenario-runs/${runId}`, { token });
    return res.status === 200 && res.body.status === 'done' ? res.body : undefined;
  }, 30_000);
}

/** Saves and runs `definition` once done. */
export async function play(service: TestService, token: string, definition: unknown, body: { runs?: number } = {}) {
  return runScenario(service, token, await saveScenario(service, token, definition), body);
}
