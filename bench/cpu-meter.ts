import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU spent while something ran: this process's (API, workers, client) and the whole machine's (with
 * Postgres and the Temporal server when they run here). Throughput on a shared two-core machine moves
 * ±20 % with the host's load; the CPU a run costs moves much less, and round trips saved show there
 * first. The machine's figure is Linux's /proc/stat (busy = user, nice, system, irq, softirq; stolen
 * and idle time excluded), null elsewhere; it counts everything on the machine, so measure with nothing
 * else running.
 */
export interface CpuSpent {
  processMs: number;
  machineBusyMs: number | null;
}

export function startCpuMeter(): () => CpuSpent {
  const process0 = process.cpuUsage();
  const machine0 = machineBusyMs();
  return () => {
    const used = process.cpuUsage(process0);
    const machine = machineBusyMs();
    return { processMs: (used.user + used.system) / 1000, machineBusyMs: machine === null || machine0 === null ? null : machine - machine0 };
  };
}

let ticksPerSecond: number | undefined;

function machineBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number);
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return ((user! + nice! + system! + irq! + softirq!) * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
}
