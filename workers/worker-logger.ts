import { DefaultLogger, type LogLevel, type LogMetadata } from '@temporalio/worker';

/** What the SDK says of a worker without workflows, which the re-embedding batches' worker is by design. */
export const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';

/**
 * The Temporal SDK's logger for the workers, less one warning: the worker that takes the re-embedding
 * batches of this process's weights runs activities only (workers/reembedding.ts), and an operator
 * should not read a warning at every start about something meant.
 */
export class WorkerLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (message === NO_WORKFLOWS_WARNING) return;
    super.log(level, message, meta);
  }
}
