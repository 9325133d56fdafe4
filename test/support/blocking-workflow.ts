/**
 * A workflow module for test/activation-watchdog.test.ts, bundled on its own: one activation that holds
 * its workflow thread `ms` milliseconds without yielding, as workflow code stuck in synchronous work would
 * (Atomics.wait blocks the thread without spending CPU; a vm timeout interrupts it like any JavaScript).
 */
export async function holdThread(ms: number): Promise<string> {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  return `held ${ms} ms`;
}
