import { SearchAttributeType, defineSearchAttributeKey, type SearchAttributePair } from '@temporalio/common';

/**
 * The search attributes the platform's workflows carry, so an operator can filter the Temporal Web UI
 * (`TenantId = "ten_…"`). Registered on the dev server by temporal-dev.yaml, on other clusters by their
 * operator (README).
 */
export const TenantIdAttribute = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const AgentIdAttribute = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const RunSourceAttribute = defineSearchAttributeKey('RunSource', SearchAttributeType.KEYWORD);
/** On an experiment's workflows and its runs' workflows. */
export const ExperimentIdAttribute = defineSearchAttributeKey('ExperimentId', SearchAttributeType.KEYWORD);

/** What a run's workflow carries: its tenant, agent and source, and an eval run's experiment. */
export function runSearchAttributes(run: { tenantId: string; agentId: string; source: string; experimentId?: string }): SearchAttributePair[] {
  return [
    { key: TenantIdAttribute, value: run.tenantId },
    { key: AgentIdAttribute, value: run.agentId },
    { key: RunSourceAttribute, value: run.source },
    ...(run.experimentId ? [{ key: ExperimentIdAttribute, value: run.experimentId }] : []),
  ];
}
