// ctxguard.exe under Wine, driven by the real MCP SDK client (Linux node) against a small
// Windows MCP server built with MinGW (tests/native/mcp_test_server.cpp). scripts/test-windows.sh
// runs it with:
//   CTXGUARD_EXE   build-windows/ctxguard.exe
//   TEST_SERVER    build-windows/tests/mcp_test_server.exe
//   WINE           the wine64 binary; WINEPREFIX and WINEDEBUG in the environment
//
// What it shows: small results relayed byte for byte, a large JSON answer paginated and read
// back whole with ctxguard_fetch, a crash mid-answer answered with an error, the client closing
// stdin ending the server and what it started (the Job Object), and a .cmd server started through
// cmd.exe with arguments cmd.exe would otherwise mangle.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { closeAllSessions, connectDirect, makeTempDir, removeDir, waitFor, watchWayOn } from '../lib/harness.mjs';
import { reconstructJson, textOf } from '../lib/reconstruct.mjs';

const { CTXGUARD_EXE, TEST_SERVER, WINE } = process.env;
// On Windows itself (.github/workflows/platforms.yml) the programs run as they are.
const native = process.platform === 'win32';
const skip = CTXGUARD_EXE && TEST_SERVER && (WINE || native) ? false : 'set CTXGUARD_EXE, TEST_SERVER and WINE';

// A path as the Windows programs see it: under Wine, a Unix path on its Z: drive.
const windowsPath = (file) => (native ? path.resolve(file) : `Z:${path.resolve(file).replaceAll('/', '\\')}`);
const wine = ([program, ...args]) =>
  native ? { command: program, args, env: { ...process.env } } : { command: WINE, args: [program, ...args], env: { ...process.env } };
const server = (...args) => wine([TEST_SERVER, ...args]);
const proxied = (serverPath, serverArgs = [], flags = []) =>
  wine([CTXGUARD_EXE, ...flags, '--', windowsPath(serverPath), ...serverArgs]);

const call = (session, name, args = {}) => session.client.callTool({ name, arguments: args });
// A session through ctxguard.exe: its answers' way on checked, the data handed over (harness.mjs).
const connectThrough = async (...args) => {
  const session = await connectDirect(proxied(...args));
  watchWayOn(session.client);
  return session;
};
const run = ([program, ...args]) => {
  const { command, args: all, env } = wine([program, ...args]);
  return execFileSync(command, all, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
};

// %APPDATA% as the Windows programs see it, and where that is on this machine.
function appData() {
  if (native) return process.env.APPDATA;
  const windows = run(['cmd', '/c', 'echo %APPDATA%']).trim();  // C:\users\NAME\AppData\Roaming
  return path.join(process.env.WINEPREFIX, 'drive_c', ...windows.slice(3).split('\\'));
}

describe('ctxguard.exe under Wine', { skip }, () => {
  const scratch = makeTempDir('ctxguard-wine-');
  after(async () => {
    await closeAllSessions();
    removeDir(scratch);
  });

  it('relays small results exactly as the server gives them', async () => {
    const direct = await connectDirect(server());
    const through = await connectThrough(TEST_SERVER);
    for (const [name, args] of [['echo', { text: 'héllo, wörld' }], ['slow', { ms: 50 }], ['big_json', { count: 3 }]]) {
      assert.deepEqual(await call(through, name, args), await call(direct, name, args), name);
    }
    const tools = await through.client.listTools();
    assert.ok(tools.tools.some((tool) => tool.name === 'ctxguard_fetch'));
    await direct.close();
    await through.close();
  });

  it('paginates a large answer, and every page comes back through ctxguard_fetch', async () => {
    const direct = await connectDirect(server());
    const through = await connectThrough(TEST_SERVER);
    const expected = JSON.parse(textOf(await call(direct, 'big_json', { count: 400 })));
    const first = await call(through, 'big_json', { count: 400 });
    const meta = JSON.parse(textOf(first))._ctxguard;
    assert.ok(meta?.hasMore && meta.totalCount === 400, JSON.stringify(meta));
    const rebuilt = await reconstructJson(through.client, first);
    assert.ok(rebuilt.fetches > 0);
    assert.deepEqual(rebuilt.value, expected);
    await direct.close();
    await through.close();
  });

  it('answers a call whose server crashed mid-answer with an error', async () => {
    const through = await connectThrough(TEST_SERVER);
    await assert.rejects(call(through, 'crash'), /exited with status 3 before answering tools\/call/);
    await through.close();
  });

  it('ends the server and what it started when the client closes stdin', async () => {
    const beat = path.join(scratch, 'heartbeat.txt');
    const through = await connectThrough(TEST_SERVER);
    const child = await call(through, 'spawn_child', { file: windowsPath(beat) });
    assert.ok(Number(textOf(child)) > 0, textOf(child));
    await waitFor(() => fs.existsSync(beat), 10000, 'the first heartbeat');
    await through.client.close();  // closes ctxguard's stdin
    await through.exited;
    // The heartbeat stops: the grandchild died with the job, though no one waited for it.
    const settle = async () => {
      const before = fs.readFileSync(beat, 'utf8');
      await new Promise((resolve) => setTimeout(resolve, 500));
      return fs.readFileSync(beat, 'utf8') === before;
    };
    await waitFor(settle, 10000, 'the heartbeat to stop');
  });

  it('starts a .cmd server through cmd.exe, its arguments unchanged', async () => {
    const script = path.join(scratch, 'server.cmd');
    fs.writeFileSync(script, `@"${windowsPath(TEST_SERVER)}" %*\r\n`);
    // Wine's cmd.exe expands %VAR% again inside what a batch file's %* gave it (Windows' does
    // not): there the `%` cases run only natively; the command line itself is checked exactly
    // in tests/proxy/windows_command_test.cpp.
    const percent = native ? ['100%', '%PATH%'] : [];
    const args = ['plain', 'two words', 'quote"inside', ...percent, 'a&b|c', 'trailing\\', 'é ü'];
    const through = await connectThrough(script, args);
    const argv = JSON.parse(textOf(await call(through, 'argv')));
    assert.deepEqual(argv.slice(1), args);
    await through.close();
  });

  it('wrap puts itself in front of Claude Desktop\'s servers, and unwrap restores the file', async () => {
    const dir = path.join(appData(), 'Claude');
    const file = path.join(dir, 'claude_desktop_config.json');
    fs.mkdirSync(dir, { recursive: true });
    const npxArgs = ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\Users\\me\\Documents'];
    const original = `${JSON.stringify({
      mcpServers: {
        files: { command: 'npx', args: npxArgs },
        test: { command: windowsPath(TEST_SERVER) },
      },
    }, null, 2)}\n`;
    fs.writeFileSync(file, original);

    run([CTXGUARD_EXE, 'wrap', '--client', 'claude-desktop', '--', '--token-budget', '1500']);
    const servers = JSON.parse(fs.readFileSync(file, 'utf8')).mcpServers;
    // The path written is this ctxguard.exe as Windows names it, wherever it was started from.
    assert.match(servers.files.command, /^[A-Z]:\\.*\\ctxguard\.exe$/i);
    assert.deepEqual(servers.files.args, ['--token-budget', '1500', '--', 'npx', ...npxArgs]);
    assert.deepEqual(servers.test.args, ['--token-budget', '1500', '--', windowsPath(TEST_SERVER)]);

    // The wrapped entry, started as Claude Desktop starts it, answers within the budget it set.
    const session = await connectDirect(wine([servers.test.command, ...servers.test.args]));
    watchWayOn(session.client);
    const first = await call(session, 'big_json', { count: 400 });
    const meta = JSON.parse(textOf(first))._ctxguard;
    assert.ok(meta.hasMore && meta.estimatedTokens <= 1500, JSON.stringify(meta));
    await session.close();

    run([CTXGUARD_EXE, 'unwrap', '--client', 'claude-desktop']);
    assert.equal(fs.readFileSync(file, 'utf8'), original);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
