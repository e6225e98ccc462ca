/**
 * Reading the tool manifest the integrator serves at GET {tools_base}/manifest (protocol §2.3, §4.3).
 *
 * The house rule of src/botlink/channel-response.ts holds here too: whatever is wrong becomes a recorded problem,
 * never a crash. A manifest that cannot be read at all (a status other than 200, a body that is not JSON, no `tools`
 * array) is status 'unavailable' with one sentence; a bad tool inside a readable manifest is dropped with its
 * problems and the good ones stay usable. The rules, in the order they are applied:
 *
 * 1. Only the first MAX_TOOLS entries are read (protocol §2.3, §8: at most 8); each further entry is dropped with a
 *    problem, whatever it holds, so the tools the AI gets are always among the first eight the integrator listed.
 * 2. An entry must be an object; its `name` must match TOOL_NAME_PATTERN (letters, digits, _ and -, 1 to 64).
 * 3. The first entry with a given name claims it: a later entry with the same name is dropped, even when the first
 *    one was dropped for another reason (the integrator's server answers to one definition per name; guessing which
 *    one it meant is worse than saying so).
 * 4. `description` must be a string of at most MAX_TOOL_DESCRIPTION_CHARS characters (code points). It is required:
 *    it is all the AI knows about when to call the tool.
 * 5. `parameters` must be an object with `type: 'object'`, a `properties` object and, if present, a `required` array
 *    of strings; then it must compile safely (./tool-schema.ts).
 *
 * A problem's `field` is a path from the tool entry ('name', 'parameters.properties.postcode.pattern'); a problem
 * about the entry as a whole has field 'tools'. `index` is always the entry's position in the manifest's array.
 *
 * The manifest returned is deep-frozen: the client caches it and hands the same object to every session.
 */
import { MAX_TOOL_DESCRIPTION_CHARS, MAX_TOOLS, TOOL_NAME_PATTERN } from '../limits.ts';
import { cleanJson } from '../text/outside-text.ts';
import { cutToChars } from '../text/cut.ts';
import type { ArgsVerdict, ToolSchemaCompiler } from './tool-schema.ts';
import type { ManifestProblem, ToolManifest, ToolSpec } from './tools-types.ts';
import { describeValue, isObject, own } from '../json-value.ts';

const toolName = new RegExp(TOOL_NAME_PATTERN);

/** A manifest and, for each tool in it, the check of its arguments (compiled once per fetch). */
export interface LoadedManifest {
  manifest: ToolManifest;
  checks: ReadonlyMap<string, (args: unknown) => ArgsVerdict>;
}

/** What the HTTP client read: the status, the body (at most MAX_RESPONSE_BYTES) and whether it was cut there. */
export interface ManifestResponse {
  status: number;
  body: Buffer;
  truncated: boolean;
}

/** A property of the value itself, never one inherited through the prototype ("__proto__", "constructor"). */

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** A manifest that could not be read: no tools, and why, as a sentence for people. */
export function unavailableManifest(error: string, fetchedAt: number): ToolManifest {
  return deepFreeze({ tools: [], problems: [], fetchedAt, status: 'unavailable', error });
}

/** A name as a problem shows it: the name itself when it is a string, cut so a huge one does not flood the record. */
function shownName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const cut = cutToChars(value, 80);
  return cut.length < value.length ? `${cut}…` : cut;
}

/** The problems of the `parameters` shape of protocol §2.3, before it is compiled. */
function parametersShapeProblems(parameters: unknown): { field: string; message: string }[] {
  if (!isObject(parameters)) {
    return [{ field: 'parameters', message: `must be a JSON Schema object, not ${describeValue(parameters)}` }];
  }
  const problems: { field: string; message: string }[] = [];
  const type = own(parameters, 'type');
  if (type !== 'object') {
    problems.push({ field: 'parameters.type', message: `must be "object", not ${type === undefined ? 'missing' : JSON.stringify(type)}` });
  }
  const properties = own(parameters, 'properties');
  if (!isObject(properties)) {
    problems.push({
      field: 'parameters.properties',
      message: properties === undefined ? 'is missing; it must be an object of parameter schemas' : `must be an object, not ${describeValue(properties)}`,
    });
  }
  const required = own(parameters, 'required');
  if (required !== undefined && !(Array.isArray(required) && required.every((r) => typeof r === 'string'))) {
    problems.push({ field: 'parameters.required', message: 'must be an array of parameter names' });
  }
  return problems;
}

/**
 * The tools of a parsed manifest body's `tools` array, checked by the rules of the module comment. `compiler` is the
 * tools client's own (one Ajv per client).
 */
export function readManifestTools(
  entries: readonly unknown[],
  compiler: ToolSchemaCompiler,
): { tools: ToolSpec[]; problems: ManifestProblem[]; checks: Map<string, (args: unknown) => ArgsVerdict> } {
  const tools: ToolSpec[] = [];
  const problems: ManifestProblem[] = [];
  const checks = new Map<string, (args: unknown) => ArgsVerdict>();
  const claimed = new Set<string>();

  for (const [index, entry] of entries.entries()) {
    const name = isObject(entry) ? own(entry, 'name') : undefined;
    const tool = shownName(name);
    const problem = (field: string, message: string): void => {
      problems.push({ index, ...(tool === undefined ? {} : { tool }), field, message });
    };

    if (index >= MAX_TOOLS) {
      problem('tools', `is beyond the first ${MAX_TOOLS} tools a manifest may list (protocol §2.3); ignored`);
      continue;
    }
    if (!isObject(entry)) {
      problem('tools', `must be a tool object, not ${describeValue(entry)}; ignored`);
      continue;
    }

    const before = problems.length;
    if (typeof name !== 'string' || !toolName.test(name)) {
      problem('name', 'must be 1 to 64 letters (A-Z, a-z), digits, _ or - (protocol §2.3); the tool is ignored');
    } else if (claimed.has(name)) {
      problem('name', 'is used by an earlier tool in the manifest; only the first one counts, this one is ignored');
      continue;
    } else {
      claimed.add(name);
    }

    const description = own(entry, 'description');
    if (typeof description !== 'string') {
      problem('description', `must be a string, not ${description === undefined ? 'missing' : describeValue(description)}; the tool is ignored`);
    } else if (Array.from(description).length > MAX_TOOL_DESCRIPTION_CHARS) {
      problem('description', `is longer than ${MAX_TOOL_DESCRIPTION_CHARS} characters (protocol §2.3); the tool is ignored`);
    }

    const parameters = own(entry, 'parameters');
    const shape = parametersShapeProblems(parameters);
    for (const p of shape) problem(p.field, `${p.message}; the tool is ignored`);
    if (problems.length > before) continue;

    const compiled = compiler.compile(parameters as Record<string, unknown>);
    if (!compiled.ok) {
      problem(compiled.problem.field, `${compiled.problem.message}; the tool is ignored`);
      continue;
    }
    tools.push({ name: name as string, description: description as string, parameters: compiled.compiled.parameters });
    checks.set(name as string, compiled.compiled.check);
  }
  return { tools, problems, checks };
}

function decode(body: Buffer): string | null {
  try {
    // fatal: RFC 8259 §8.1 requires UTF-8; a body that is not is named as such rather than parsed with U+FFFD in it.
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return null;
  }
}

/**
 * The manifest from the response to GET {tools_base}/manifest (protocol §4.3: "Response 200 with the manifest of section
 * 2.3"). Never throws. `fetchedAt` is ms since the epoch, from the client's clock.
 */
export function readToolManifest(response: ManifestResponse, compiler: ToolSchemaCompiler, fetchedAt: number): LoadedManifest {
  const unavailable = (error: string): LoadedManifest => ({ manifest: unavailableManifest(error, fetchedAt), checks: new Map() });
  if (response.status !== 200) {
    const hint = response.status === 401 ? ' The integrator refused the request: check that both sides use the same key and a correct clock.' : '';
    return unavailable(`The tools manifest answered HTTP ${response.status}; it must answer 200 (protocol §4.3).${hint}`);
  }
  if (response.truncated) {
    return unavailable('The tools manifest is larger than 64 KB and was cut off there (protocol §7.2), so it cannot be read.');
  }
  const text = decode(response.body);
  if (text === null) return unavailable('The tools manifest is not valid UTF-8 text, so it is not valid JSON.');
  let body: unknown;
  try {
    // The integrator's text follows the outside-text rule from here on (src/text/outside-text.ts).
    body = cleanJson(JSON.parse(text) as unknown);
  } catch {
    return unavailable('The tools manifest is not valid JSON.');
  }
  if (!isObject(body)) return unavailable(`The tools manifest must be a JSON object with a "tools" array (protocol §2.3), not ${describeValue(body)}.`);
  const entries = own(body, 'tools');
  if (!Array.isArray(entries)) {
    return unavailable(`The tools manifest's "tools" must be an array (protocol §2.3), not ${entries === undefined ? 'missing' : describeValue(entries)}.`);
  }
  const { tools, problems, checks } = readManifestTools(entries, compiler);
  return { manifest: deepFreeze({ tools, problems, fetchedAt, status: 'ok' }), checks };
}
