import { objectSchema, requireString, type ActivityBuiltinTool } from './definition.js';
import { toolK } from './search-k.js';

/** `knowledge_search(query, k?, kb?)`: the top chunks, trimmed to what the model is best served by. */
export const knowledgeSearch: ActivityBuiltinTool = {
  runsIn: 'activity',
  description: 'Search the knowledge bases for the passages most relevant to a query (optionally one knowledge base, "kb").',
  parameters: objectSchema({ query: { type: 'string' }, k: { type: 'integer', minimum: 1, maximum: 50 }, kb: { type: 'string' } }, ['query']),
  async run(args, context) {
    let kbId: string | undefined;
    if (typeof args.kb === 'string') {
      kbId = await context.findKnowledgeBase(args.kb);
      if (!kbId) throw new Error(`no knowledge base named '${args.kb}'`);
    }
    const hits = await context.searchKnowledge({ query: requireString(args, 'query'), kbId, k: toolK(args) });
    return { hits: hits.map((h) => ({ content: h.content, document_id: h.document_id, title: h.title, kb: h.kb, similarity: h.similarity })) };
  },
};
