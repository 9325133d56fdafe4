import type { Client } from '@temporalio/client';
import { isDatabaseReachable, type Db } from '../db/database.js';
import { callModel } from './call-model.js';
import { executeTool } from './execute-tool.js';
import { storeRunHistory } from './run-history.js';
import { finishRun, pauseRun, resumeRun, startRun } from './run-lifecycle.js';
import type { FinishInput, ModelTurnInput, RunRef, StepInput, StepOutcome } from './run-types.js';
import { beginStep, completeStep } from './steps.js';
import type { OutboundPolicy } from './tools/types.js';
import { Context } from '@temporalio/activity';
import { enforceGuardrails } from './guardrail-checks.js';
import type { Guardrail } from './guardrails/index.js';
import type { Embedder } from './embedding/index.js';
import { convertDocumentSource, embedDocumentChunks, extractGraph, failDocument, markDocumentReady, type DocumentRef } from './ingest.js';

/** What activities reach: handed in by the worker process, never imported globals. */
export interface ActivityDeps {
  db: Db;
  temporal: Client;
  /** Which private or loopback destinations HTTP and MCP tools may reach (TOOL_HTTP_ALLOW_HOSTS). */
  outboundPolicy: OutboundPolicy;
  /** Memory, knowledge and their built-in tools embed with this. */
  embedder: () => Embedder;
}

/** Every activity, bound to its dependencies. Each one's logic lives in its own module. */
export function createActivities(deps: ActivityDeps) {
  const { db } = deps;
  return {
    /** True when the worker's database answers. */
    checkDatabase: (): Promise<boolean> => isDatabaseReachable(db),
    startRun: (ref: RunRef) => startRun(db, ref),
    pauseRun: (ref: RunRef & { questionId: string; question: string }) => pauseRun(db, ref),
    resumeRun: (ref: RunRef & { questionId: string; answer: string }) => resumeRun(db, ref),
    finishRun: (finish: FinishInput) => finishRun(db, finish),
    callModel: (input: ModelTurnInput) => callModel(db, input),
    executeTool: (step: StepInput) => executeTool(db, deps, step),
    beginStep: (step: StepInput) => beginStep(db, step),
    completeStep: (step: StepInput, outcome: StepOutcome) => completeStep(db, step, outcome),
    storeRunHistory: (ref: RunRef) => storeRunHistory(db, deps.temporal, ref),
    convertDocumentSource: (ref: DocumentRef) => convertDocumentSource(db, ref),
    embedDocumentChunks: (ref: DocumentRef) => embedDocumentChunks(db, deps.embedder(), ref),
    extractGraph: (ref: DocumentRef) => extractGraph(db, ref),
    failDocument: (ref: DocumentRef & { error: string }) => failDocument(db, ref),
    markDocumentReady: (ref: DocumentRef & { problem: string | null }) => markDocumentReady(db, ref),
    /** The run input after the input guardrails (redacted where they redact); throws when one blocks. */
    checkInput: (ref: RunRef & { text: string; guardrails: Guardrail[] }) =>
      enforceGuardrails(db, ref, ref.guardrails, 'input', ref.text, 'input', Context.current().cancellationSignal),
  };
}

export type Activities = ReturnType<typeof createActivities>;
