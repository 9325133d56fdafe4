import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../db/database.js';
import type { Embedder } from './embedding/index.js';
import type { RunCalls } from './runs/types.js';
import type { OutboundPolicy } from './tools/types.js';

/** What activities reach: handed in by the worker process, never imported globals. */
export interface ActivityDeps {
  db: Db;
  temporal: Client;
  /** Which private or loopback destinations HTTP and MCP tools may reach (TOOL_HTTP_ALLOW_HOSTS). */
  outboundPolicy: OutboundPolicy;
  /** Memory, knowledge and their built-in tools embed with this. */
  embedder: () => Embedder;
  /** The workflow code the workers run, which stored run histories are replayed against. */
  workflowBundle: WorkflowBundle;
  /** How runs that begin on this worker make their model turns and tool calls (RUN_CALLS). */
  runCalls: RunCalls;
}
