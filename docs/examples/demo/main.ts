/**
 * `npm run demo`: the engine, the reference integrator and scripted customers on every channel, with a transcript;
 * exit 0 when every check passed, 1 otherwise. `npm run demo -- --keep` stays up afterwards, so the same conversations
 * can be opened in the dashboard, until Ctrl-C. `--quick` is the short form the test suite runs.
 */
import { runDemo } from './run-demo.ts';

const args = new Set(process.argv.slice(2));
const keep = args.has('--keep');
const started = performance.now();

let result: Awaited<ReturnType<typeof runDemo>>;
try {
  result = await runDemo({ quick: args.has('--quick') });
} catch (err) {
  console.error(`demo: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
}

console.log('');
// The addresses only where the server stays up to open them: without --keep it stops right after this.
if (keep) {
  console.log(`Dashboard:  ${result.dashboardUrl}`);
  console.log('Sign in:    choose "Sign in with a token" and paste the owner token');
  console.log(`            ${result.ownerToken}`);
  if (result.inviteUrl) console.log(`            or open ${result.inviteUrl} and choose a password`);
  console.log(`Widget:     ${result.widgetDemoUrl}  (the chat widget on a sample shop page)`);
} else {
  console.log('To open these conversations in the dashboard, run it again with the server kept up: npm run demo -- --keep');
}
console.log(`Demo took ${((performance.now() - started) / 1000).toFixed(1)} s.`);

if (keep) {
  console.log('Botlink keeps running with these conversations; Ctrl-C stops it (the demo data goes with it).');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void result.stop().then(() => process.exit(result.ok ? 0 : 1)));
  }
} else {
  await result.stop();
  process.exit(result.ok ? 0 : 1);
}
