import { strandedDocuments } from './documents.js';
import { strandedExperiments } from './experiments.js';
import type { StrandedWorkKind } from './kind.js';
import { strandedRuns } from './runs.js';

/** Every kind of work the sweep looks for. */
export const STRANDED_WORK_KINDS: StrandedWorkKind[] = [strandedRuns, strandedDocuments, strandedExperiments];
