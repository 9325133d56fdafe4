import { startDocumentConversion } from '../../activities/knowledge/start-conversion.js';
import { listStrandedDocuments, setDocumentFailed } from '../../db/documents.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { StrandedWorkKind } from './kind.js';

/** A document upload accepted while Temporal could not take its processing, or just before its API stopped. */
export const strandedDocuments: StrandedWorkKind = {
  name: 'documents',
  list: async (db, query) =>
    (await listStrandedDocuments(db, query)).map((document) => ({
      id: document.id,
      workflowId: `ingest-${document.id}`,
      tooLate: document.too_late,
      overdue: document.overdue,
      start: (temporal) => startDocumentConversion(temporal, { tenantId: document.tenant_id, documentId: document.id }),
      giveUp: ({ db }, reason) => withTenant(db, document.tenant_id, (tx) => setDocumentFailed(tx, document.tenant_id, document.id, `${reason}; upload it again`, ['accepted'])),
    })),
};
