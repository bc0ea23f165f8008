// Relay round trip through ctxguard under Wine against the same on Linux: sequential `echo`
// calls with the real SDK client, measured in alternating blocks so that machine noise hits both
// alike. The figure that matters is the ratio within one run.
//
//   CTXGUARD_EXE=... TEST_SERVER=... WINE=... CTXGUARD_BIN=... LINUX_SERVER=... \
//     node windows/round-trip.mjs [calls]
import { performance } from 'node:perf_hooks';

import { closeAllSessions, connectDirect } from '../lib/harness.mjs';

const { CTXGUARD_EXE, TEST_SERVER, WINE, CTXGUARD_BIN, LINUX_SERVER } = process.env;
const calls = Number(process.argv[2] ?? 400);
const windowsPath = (file) => `Z:${file.replaceAll('/', '\\')}`;
const env = { ...process.env };

const sessions = {
  wine: await connectDirect({ command: WINE, args: [CTXGUARD_EXE, '--', windowsPath(TEST_SERVER)], env }),
  linux: await connectDirect({ command: CTXGUARD_BIN, args: ['--', LINUX_SERVER], env }),
};
const times = { wine: [], linux: [] };
const block = 20;
for (let done = 0; done < calls; done += block) {
  for (const [name, session] of Object.entries(sessions)) {
    for (let i = 0; i < block; i++) {
      const start = performance.now();
      await session.client.callTool({ name: 'echo', arguments: { text: `call ${done + i}` } });
      times[name].push(performance.now() - start);
    }
  }
}
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = {};
for (const [name, list] of Object.entries(times)) {
  const sorted = [...list].sort((a, b) => a - b);
  const mean = list.reduce((a, b) => a + b, 0) / list.length;
  summary[name] = { calls: list.length, mean_ms: +mean.toFixed(3), p50_ms: +quantile(sorted, 0.5).toFixed(3), p99_ms: +quantile(sorted, 0.99).toFixed(3) };
}
summary.ratio_mean = +(summary.wine.mean_ms / summary.linux.mean_ms).toFixed(2);
summary.ratio_p50 = +(summary.wine.p50_ms / summary.linux.p50_ms).toFixed(2);
console.log(JSON.stringify(summary, null, 2));
await closeAllSessions();
