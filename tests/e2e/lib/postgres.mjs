// A real PostgreSQL for the tests that need one: Debian's server binaries, a scratch cluster in
// a temporary directory, listening on 127.0.0.1 at a free port, trusted local logins. Started and
// stopped by the test itself; nothing outside the temporary directory is touched.
//
//   const pg = await startPostgres();          // null when no PostgreSQL server is installed
//   pg.psql('CREATE TABLE t (x int)');          // runs SQL (throws with psql's stderr on error)
//   pg.url                                     // postgresql://ctxguard@127.0.0.1:PORT/demo
//   await pg.stop();
//
// initdb refuses to run as root: as root the cluster is made and run by the `postgres` user
// Debian's package creates, in a directory given to that user.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const USER = 'ctxguard';
const DATABASE = 'demo';

/** The newest /usr/lib/postgresql/N/bin holding initdb, or null. */
export function postgresBinDir() {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return null;
  const versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], 'bin') : null;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `file args` as the cluster's owner: `postgres` when we are root, else ourselves. */
function runAsOwner(file, args, options = {}) {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  const result = spawnSync(command, argv, { encoding: 'utf8', ...options });
  if (result.status !== 0) {
    throw new Error(`${path.basename(file)} ${args.join(' ')} failed (${result.status}): ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/**
 * Starts a scratch cluster with database `demo` owned by superuser `ctxguard`.
 * @returns {Promise<null | {url: string, port: number, psql: (sql: string) => string, copyCsv: (table: string, csv: string) => void, stop: () => Promise<void>}>}
 */
export async function startPostgres() {
  const bin = postgresBinDir();
  if (!bin) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxguard-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  runAsOwner(path.join(bin, 'initdb'), ['-D', data, '-U', USER, '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  runAsOwner(path.join(bin, 'pg_ctl'), [
    '-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60',
    '-o', `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`,
    'start',
  ]);
  const psqlAt = (database, sql) => execFileSync(path.join(bin, 'psql'),
    ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', USER, '-d', database, '-c', sql],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  psqlAt('postgres', `CREATE DATABASE ${DATABASE}`);
  let stopped = false;
  return {
    url: `postgresql://${USER}@127.0.0.1:${port}/${DATABASE}`,
    port,
    psql: (sql) => psqlAt(DATABASE, sql),
    /** Loads `csv` (with a header line) into `table` through COPY FROM STDIN. */
    copyCsv(table, csv) {
      execFileSync(path.join(bin, 'psql'),
        ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', USER, '-d', DATABASE,
          '-c', `COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`],
        { input: csv, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        runAsOwner(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
