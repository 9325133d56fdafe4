// Every workflow the workers register. Workflow code is deterministic: all I/O lives in activities/.
export { agentRun } from './agent-run.js';
export { archiveRunHistory } from './archive-run-history.js';
export { convertDocument } from './convert-document.js';
export { deliverWebhook } from './deliver-webhook.js';
export { experiment } from './experiment.js';
export { experimentCell } from './experiment-cell.js';
export { ping } from './ping.js';
export { reembedVectors } from './reembed-vectors.js';
export { runHistoryArchiver } from './run-history-archiver.js';
export { replayRun } from './replay-run.js';
export { scheduledRun } from './scheduled-run.js';
