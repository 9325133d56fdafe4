import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const INSTALL_HINT =
  `Get the Temporal CLI one of these ways, then start again:\n` +
  `  - set TEMPORAL_CLI_PATH to an existing 'temporal' binary, or put 'temporal' on PATH;\n` +
  `  - install Go 1.25+ and run: go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}\n` +
  `  - or set TEMPORAL_ADDRESS to a Temporal server you already run.`;

/** Where a built CLI is kept between runs: `$XDG_CACHE_HOME/agent-platform/bin` (or ~/.cache/...). */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'agent-platform', 'bin');
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI_PATH, then `temporal` on PATH, then the cache, then builds it into
 * the cache with `go install` when Go is present. Returns undefined when none of those worked, so the
 * caller can try the SDK's own download.
 */
export async function findTemporalCli(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env.TEMPORAL_CLI_PATH) {
    if (isExecutable(env.TEMPORAL_CLI_PATH)) return env.TEMPORAL_CLI_PATH;
    throw new Error(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file.\n${INSTALL_HINT}`);
  }
  const onPath = findOnPath('temporal', env);
  if (onPath) return onPath;
  const cached = path.join(temporalCliCacheDir(env), 'temporal');
  if (isExecutable(cached)) return cached;
  const go = findOnPath('go', env);
  if (go) {
    await goInstall(go, temporalCliCacheDir(env));
    if (isExecutable(cached)) return cached;
  }
  return undefined;
}

export function temporalCliMissingMessage(): string {
  return `The Temporal CLI was not found and could not be built or downloaded.\n${INSTALL_HINT}`;
}

async function goInstall(go: string, dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  console.log(`[temporal] building the Temporal CLI ${TEMPORAL_CLI_VERSION} with 'go install' into ${dir} (once; a few minutes)...`);
  const child = spawn(go, ['install', '-x', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`], {
    env: { ...process.env, GOBIN: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // `-x` prints every build step; show a dot per package compiled so a long build visibly progresses.
  let steps = 0;
  child.stderr.on('data', (chunk: Buffer) => {
    const compiled = chunk.toString().split('\n').filter((l) => l.includes('/compile ')).length;
    for (let i = 0; i < compiled; i++) if (++steps % 10 === 0) process.stdout.write('.');
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  process.stdout.write('\n');
  if (code !== 0) console.error(`[temporal] go install failed with exit code ${code}`);
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
