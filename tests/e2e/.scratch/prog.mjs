import { connectDirect, connectProxied, serverCommand, closeAllSessions } from '../lib/harness.mjs';
const cmd = serverCommand('everything');
const mode = process.argv[2];
const s = mode === 'p' ? await connectProxied(cmd, []) : await connectDirect(cmd);
for (let i = 0; i < 5; i++) {
  const progress = [];
  const r = await s.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 6 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
  console.log(mode, progress.join(','));
}
await closeAllSessions();
