import { chatCompletionStream } from './wire-servers/openai.js';
import { startWireServer, type WireServer } from './wire-servers/sse-server.js';

/** Entities the extraction side knows, with the relations it reports when both ends are in a text. */
const ENTITIES: Record<string, string> = { 'Ada Lovelace': 'person', 'Charles Babbage': 'person', 'Analytical Engine': 'product', London: 'place' };
const RELATIONS = [
  { source: 'Ada Lovelace', relation: 'wrote notes on', target: 'Analytical Engine' },
  { source: 'Charles Babbage', relation: 'designed', target: 'Analytical Engine' },
  { source: 'Charles Babbage', relation: 'was born in', target: 'London' },
];

/**
 * A model for tests that must see what the model was sent: an OpenAI-compatible server (reached as
 * `ollama/echo` through OLLAMA_BASE_URL) whose answer describes the conversation it received, e.g.
 * `saw user,assistant,user; last: "second question"`. Asked to extract entities (the knowledge graph's
 * prompt), it answers with the entities of a small fixed list that the text names.
 */
export async function startEchoModel(): Promise<WireServer> {
  return startWireServer((request) => {
    const messages: Array<{ role: string; content: unknown }> = request.body?.messages ?? [];
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    const content = typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content);
    const system = messages.find((m) => m.role === 'system')?.content;
    const text =
      typeof system === 'string' && system.startsWith('Extract the named entities')
        ? JSON.stringify(extract(content ?? ''))
        : `saw ${messages.map((m) => m.role).join(',')}; last: "${content}"`;
    return chatCompletionStream(request, { text: [text.slice(0, 10), text.slice(10)], usage: { prompt_tokens: 10, completion_tokens: 5 } });
  });
}

function extract(text: string) {
  const named = Object.keys(ENTITIES).filter((name) => text.includes(name));
  return {
    entities: named.map((name) => ({ name, type: ENTITIES[name] })),
    relations: RELATIONS.filter((r) => named.includes(r.source) && named.includes(r.target)),
  };
}
