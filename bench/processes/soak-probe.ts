/**
 * Loaded into the service's own process by the soak (`node --expose-gc --import ./bench/soak-probe.ts src/main.ts`,
 * see bench/soak.ts), so the service runs exactly as `npm start` runs it while its memory and event loop are read
 * from inside. Does nothing unless the process has an IPC channel.
 *
 * IPC: ← {type:'start'} (the measured part begins: the event-loop histograms are reset);
 *      ← {type:'sample', gc} → {type:'sample', …}: memory now, the event loop's delay since the previous sample, CPU
 *        so far; with `gc`, also the heap after a full collection (the level that shows a leak, which the heap in use
 *        between collections hides);
 *      ← {type:'summary'} → {type:'summary', …}: the event loop's delay over the whole measured part.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface ProbeSample {
  type: 'sample';
  at: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** heapUsed right after a full collection, when asked for (needs --expose-gc). */
  heapAfterGc: number | null;
  /** Event-loop delay since the previous sample, ns, beyond the histogram's own 10 ms timer (see below). */
  loopP99: number;
  loopMax: number;
  /** process.cpuUsage() so far, µs. */
  cpuMicros: number;
}

export interface ProbeSummary {
  type: 'summary';
  loopP50: number;
  loopP99: number;
  loopMax: number;
  loopMean: number;
}

export type ProbeMessage = ProbeSample | ProbeSummary;

if (process.send) {
  // 10 ms resolution, as in the phone-calls benchmark. The histogram records the time between two firings of its
  // 10 ms timer, so an idle loop reads 10 ms: that interval is taken off every figure reported here.
  const resolutionNs = 10e6;
  const delay = (ns: number) => Math.max(0, ns - resolutionNs);
  const window = monitorEventLoopDelay({ resolution: resolutionNs / 1e6 });
  const whole = monitorEventLoopDelay({ resolution: resolutionNs / 1e6 });
  window.enable();
  whole.enable();
  const gc = (globalThis as { gc?: () => void }).gc;

  const send = (message: ProbeMessage) => process.send?.(message);
  process.on('message', (message: { type?: string; gc?: boolean }) => {
    if (message.type === 'start') {
      window.reset();
      whole.reset();
    } else if (message.type === 'sample') {
      let heapAfterGc: number | null = null;
      if (message.gc && gc) {
        // The collection blocks the loop; the histograms are paused so that its pause is not counted as the
        // service's own delay (it is the probe's).
        window.disable();
        whole.disable();
        gc();
        heapAfterGc = process.memoryUsage().heapUsed;
        window.enable();
        whole.enable();
      }
      const m = process.memoryUsage();
      const cpu = process.cpuUsage();
      send({
        type: 'sample',
        at: Date.now(),
        rss: m.rss,
        heapUsed: m.heapUsed,
        heapTotal: m.heapTotal,
        external: m.external,
        heapAfterGc,
        loopP99: window.count > 0 ? delay(window.percentile(99)) : 0,
        loopMax: window.count > 0 ? delay(window.max) : 0,
        cpuMicros: cpu.user + cpu.system,
      });
      window.reset();
    } else if (message.type === 'summary') {
      send({ type: 'summary', loopP50: delay(whole.percentile(50)), loopP99: delay(whole.percentile(99)), loopMax: delay(whole.max), loopMean: delay(whole.mean) });
    }
  });
  // The soak went away without stopping us: stop as on SIGTERM rather than serve on as an orphan.
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  // The IPC channel must not keep a stopping service alive.
  process.channel?.unref();
}
