import { chatCompletionStream } from './wire-servers/openai.js';
import { startWireServer, type WireServer } from './wire-servers/sse-server.js';

/**
 * A model for tests that must see what the model was sent: an OpenAI-compatible server (reached as
 * `ollama/echo` through OLLAMA_BASE_URL) whose answer describes the conversation it received, e.g.
 * `saw user,assistant,user; last: "second question"`.
 */
export async function startEchoModel(): Promise<WireServer> {
  return startWireServer((request) => {
    const messages: Array<{ role: string; content: unknown }> = request.body?.messages ?? [];
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    const content = typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content);
    const text = `saw ${messages.map((m) => m.role).join(',')}; last: "${content}"`;
    return chatCompletionStream(request, { text: [text.slice(0, 10), text.slice(10)], usage: { prompt_tokens: 10, completion_tokens: 5 } });
  });
}
