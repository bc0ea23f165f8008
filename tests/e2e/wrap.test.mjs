// `ctxguard wrap` / `ctxguard unwrap` end to end (docs/configuration.md, "Wrapping a client's
// servers"): the real binary edits a Claude Desktop file and a Codex file in a scratch HOME, then
// the real SDK client is started exactly as the client would start the wrapped entry (command
// and args as written in the file) and talks to the real server-filesystem through ctxguard;
// unwrap gives the files back byte for byte; a broken file is refused and left untouched.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { parse as parseToml } from 'smol-toml';

import { closeAllSessions, connectDirect, ctxguardBin, makeTempDir, removeDir, serverCommand, skipWithoutCtxguard } from './lib/harness.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 60_000 };

/** Runs `ctxguard ARGS` with HOME set to `home`; {status, stdout, stderr}. */
function ctxguard(home, args) {
  const run = spawnSync(ctxguardBin(), args, {
    encoding: 'utf8',
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: '', CODEX_HOME: '' },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('ctxguard wrap and unwrap on a scratch HOME', { skip: SKIP, timeout: 120_000 }, () => {
  let home;
  let data;
  let desktopFile;
  let codexFile;
  let desktopText;
  let codexText;
  const filesystem = () => serverCommand('filesystem', data);

  before(() => {
    home = makeTempDir('ctxguard-wrap-home-');
    data = path.join(home, 'notes');
    fs.mkdirSync(data);
    for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(data, `note-${String(i).padStart(3, '0')}.md`), `note ${i}\n`);
    desktopFile = path.join(home, '.config', 'Claude', 'claude_desktop_config.json');
    codexFile = path.join(home, '.codex', 'config.toml');
    fs.mkdirSync(path.dirname(desktopFile), { recursive: true });
    fs.mkdirSync(path.dirname(codexFile), { recursive: true });
    const { command, args } = filesystem();
    desktopText = `${JSON.stringify({
      mcpServers: {
        notes: { command, args, env: { NOTES_OWNER: 'ana' } },
        remote: { url: 'https://mcp.example.com/mcp' },
      },
      globalShortcut: 'Ctrl+Space',
    }, null, 2)}\n`;
    codexText = [
      '# my Codex setup',
      'model = "o4-mini"',
      '',
      '[mcp_servers.notes]',
      `command = ${JSON.stringify(command)}`,
      `args = [${args.map((a) => JSON.stringify(a)).join(', ')}]`,
      'startup_timeout_sec = 30',
      '',
    ].join('\n');
    fs.writeFileSync(desktopFile, desktopText);
    fs.writeFileSync(codexFile, codexText);
  });

  after(async () => {
    await closeAllSessions();
    removeDir(home);
  });

  /** The SDK client started from `entry` as the client would start it; checks ctxguard is in between. */
  async function talkThrough(entry) {
    const session = await connectDirect({ command: entry.command, args: entry.args, env: entry.env ? { ...process.env, ...entry.env } : undefined });
    const tools = (await session.client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('ctxguard_fetch'), `ctxguard lists its own tool: ${tools.join(', ')}`);
    assert.ok(tools.includes('list_directory'));
    const listing = await session.client.callTool({ name: 'list_directory', arguments: { path: data } });
    assert.ok(!listing.isError);
    await session.close();
    return listing;
  }

  test('claude-desktop: wrapped with options, the client reaches the real server through ctxguard', T, async () => {
    const run = ctxguard(home, ['wrap', '--client', 'claude-desktop', '--', '--token-budget', '2000']);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /notes: wrapped/);
    assert.match(run.stdout, /remote: left alone \(remote\), https:\/\/mcp\.example\.com\/mcp/);
    assert.equal(fs.readFileSync(`${desktopFile}.ctxguard-backup`, 'utf8'), desktopText);
    const config = JSON.parse(fs.readFileSync(desktopFile, 'utf8'));
    const entry = config.mcpServers.notes;
    assert.equal(entry.command, fs.realpathSync(ctxguardBin()));
    assert.deepEqual(entry.args, ['--token-budget', '2000', '--', filesystem().command, ...filesystem().args]);
    assert.deepEqual(entry.env, { NOTES_OWNER: 'ana' });
    assert.deepEqual(config.mcpServers.remote, { url: 'https://mcp.example.com/mcp' });
    const listing = await talkThrough(entry);
    // 400 entries over a 2,000-token budget: ctxguard cut the listing into chunks, the way on
    // first (docs/protocol.md 3.1).
    assert.equal(listing.content.length, 3, JSON.stringify(listing).slice(0, 200));
    assert.match(listing.content[0].text, /^ctxguard: /);
    assert.match(listing.content[2].text, /"_ctxguard"/);
  });

  test('codex: the TOML file is wrapped, and its entry runs through ctxguard too', T, async () => {
    const run = ctxguard(home, ['wrap', '--client', 'codex']);
    assert.equal(run.status, 0, run.stderr);
    const text = fs.readFileSync(codexFile, 'utf8');
    // Edited in place: every line but the server's command and args is as it was, its comment
    // too, and another TOML reader (smol-toml) reads what ctxguard wrote.
    const others = (t) => t.split('\n').filter((line) => !/^(command|args) = /.test(line));
    assert.deepEqual(others(text), others(codexText));
    assert.match(text, /^# my Codex setup\n/);
    const config = parseToml(text);
    const entry = config.mcp_servers.notes;
    assert.deepEqual(entry.args.slice(0, 1), ['--']);
    assert.equal(entry.startup_timeout_sec, 30);
    assert.equal(config.model, 'o4-mini');
    await talkThrough(entry);
  });

  test('wrapping again changes nothing; new options update the entry in place', T, () => {
    const before = fs.readFileSync(desktopFile, 'utf8');
    const again = ctxguard(home, ['wrap', '--client', 'claude-desktop']);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /notes: already wrapped/);
    assert.equal(fs.readFileSync(desktopFile, 'utf8'), before);
    const dry = ctxguard(home, ['wrap', '--client', 'claude-desktop', '--dry-run', '--', '--tool-list', 'compact']);
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stdout, /^-\s+"--token-budget",$/m);
    assert.match(dry.stdout, /^\+\s+"--tool-list",$/m);
    assert.equal(fs.readFileSync(desktopFile, 'utf8'), before, '--dry-run writes nothing');
  });

  test('unwrap gives both files back byte for byte', T, () => {
    for (const client of ['claude-desktop', 'codex']) {
      const run = ctxguard(home, ['unwrap', '--client', client]);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /notes: unwrapped/);
    }
    assert.equal(fs.readFileSync(desktopFile, 'utf8'), desktopText);
    assert.equal(fs.readFileSync(codexFile, 'utf8'), codexText);
  });

  test('a broken file is refused with where it breaks, and left untouched', T, () => {
    const broken = desktopText.replace('"globalShortcut"', '"globalShortcut" "oops"');
    fs.writeFileSync(desktopFile, broken);
    const run = ctxguard(home, ['wrap', '--client', 'claude-desktop']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /not valid JSON at line \d+, column \d+/);
    assert.equal(run.stdout, '');
    assert.equal(fs.readFileSync(desktopFile, 'utf8'), broken);
  });
});
