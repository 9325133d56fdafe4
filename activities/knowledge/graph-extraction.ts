import type { Db } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import { insertBatches } from '../../db/insert-batches.js';
import type { KnowledgeGraphSettings } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { streamModelTurn } from '../models/provider.js';
import { workspaceModelSettings } from '../models/workspace-connections.js';
import type { ScriptTurn } from '../models/types.js';

const EXTRACTION_PROMPT =
  'Extract the named entities and the relations between them from the text. Answer only JSON: ' +
  '{"entities": [{"name": "...", "type": "person|organization|place|product|concept|other"}], ' +
  '"relations": [{"source": "<entity name>", "relation": "<short verb phrase>", "target": "<entity name>"}]}.';

interface Extraction {
  entities: Array<{ name: string; type: string | null }>;
  relations: Array<{ source: string; relation: string; target: string }>;
}

/**
 * Builds a document's share of its knowledge base's entity-relationship graph: the configured model reads
 * each chunk and names its entities and their relations. Entities remember the chunks that mention
 * them, which is how graph search walks from a hit to related chunks. Replaces what an earlier attempt
 * stored. A chunk whose answer is not the JSON asked for contributes nothing.
 */
export async function extractDocumentGraph(
  db: Db,
  tenantId: string,
  documentId: string,
  settings: KnowledgeGraphSettings,
  signal: AbortSignal,
  beat: () => void = () => {},
): Promise<{ entities: number; relations: number }> {
  const chunks = await withTenant(db, tenantId, (tx) =>
    tx.selectFrom('chunks').select(['id', 'kb_id', 'content']).where('document_id', '=', documentId).orderBy('index').execute(),
  );
  const entities = new Map<string, { name: string; type: string | null; chunkIds: Set<string> }>();
  const relations: Extraction['relations'] = [];
  const script = (settings.script ?? []) as ScriptTurn[];
  for (const [i, chunk] of chunks.entries()) {
    const turn = await streamModelTurn(
      {
        model: settings.model,
        messages: [
          { role: 'system', content: EXTRACTION_PROMPT },
          { role: 'user', content: chunk.content },
        ],
        tools: [],
        script,
        scriptPosition: script.length ? i % script.length : 0,
        temperature: 0,
      },
      { signal, onTextDelta: () => {} },
      workspaceModelSettings(db, tenantId),
    );
    beat();
    const extraction = parseExtraction(turn.text);
    for (const entity of extraction.entities) {
      const key = entity.name.toLowerCase();
      const known = entities.get(key) ?? { name: entity.name, type: entity.type, chunkIds: new Set<string>() };
      known.chunkIds.add(chunk.id);
      entities.set(key, known);
    }
    relations.push(...extraction.relations);
  }

  const kbId = chunks[0]?.kb_id;
  await withTenant(db, tenantId, async (tx) => {
    await tx.deleteFrom('kb_entities').where('document_id', '=', documentId).execute();
    await tx.deleteFrom('kb_relations').where('document_id', '=', documentId).execute();
    if (!kbId) return;
    const entityRows = [...entities.values()].map((e) => ({ id: newId('ent'), tenant_id: tenantId, kb_id: kbId, document_id: documentId, name: e.name, type: e.type, chunk_ids: JSON.stringify([...e.chunkIds]) }));
    for (const batch of insertBatches(entityRows)) await tx.insertInto('kb_entities').values(batch).execute();
    const relationRows = relations.map((r) => ({ id: newId('rel'), tenant_id: tenantId, kb_id: kbId, document_id: documentId, ...r }));
    for (const batch of insertBatches(relationRows)) await tx.insertInto('kb_relations').values(batch).execute();
  });
  return { entities: entities.size, relations: relations.length };
}

/** The model's JSON, tolerating code fences and prose around it; anything else is an empty extraction. */
export function parseExtraction(text: string): Extraction {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return { entities: [], relations: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(start, end + 1));
  } catch {
    return { entities: [], relations: [] };
  }
  const value = parsed as { entities?: unknown; relations?: unknown };
  const entities = (Array.isArray(value.entities) ? value.entities : [])
    .filter((e): e is { name: string; type?: unknown } => isGraphText(e?.name))
    .map((e) => ({ name: e.name.trim(), type: isGraphText(e.type) ? e.type.trim() : null }));
  const relations = (Array.isArray(value.relations) ? value.relations : [])
    .filter((r): r is Extraction['relations'][number] => [r?.source, r?.relation, r?.target].every(isGraphText))
    .map((r) => ({ source: r.source.trim(), relation: r.relation.trim(), target: r.target.trim() }));
  return { entities, relations };
}

/** The longest entity name, type or relation kept, in characters: an entity is named, not described. */
export const MAX_GRAPH_TEXT = 200;

/**
 * Whether the model's string can be an entity's name (or type, or a relation's part): not blank, at most
 * MAX_GRAPH_TEXT characters, and storable. The model reads the document, which may be written to make it
 * answer otherwise: a NUL (refused by Postgres), a lone surrogate, or kilobytes of name (past the btree
 * index's entry limit) would fail the whole document's graph on every retry.
 */
function isGraphText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '' && value.trim().length <= MAX_GRAPH_TEXT && !value.includes('\u0000') && value.isWellFormed();
}
