import { connectDirect, serverCommand, FULL_CLIENT_CAPABILITIES, closeAllSessions } from '../lib/harness.mjs';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
const t0=Date.now();
const s = await connectDirect(serverCommand('everything'), { capabilities: FULL_CLIENT_CAPABILITIES, taskStore: new InMemoryTaskStore(), setup(c){
  c.setRequestHandler(ListRootsRequestSchema, async()=>({roots:[{uri:'file:///tmp/r1',name:'R1'}]}));
}});
console.log('connected', Date.now()-t0);
console.log(JSON.stringify(s.client.getServerVersion()), Object.keys(s.client.getServerCapabilities()));
await new Promise(r=>setTimeout(r,500));
const tools = await s.client.listTools();
console.log(tools.tools.map(t=>t.name+ (t.execution? ' '+JSON.stringify(t.execution):'')).join('\n'));
console.log(s.stderrText());
await closeAllSessions();
console.log('closed', Date.now()-t0);
