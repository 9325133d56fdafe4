import { expect } from 'chai';
import { APICallError } from 'ai';
import { InvalidModelOutputError, isRetryableModelError, ModelConfigurationError } from '../activities/models/errors.js';
import { streamModelTurn } from '../activities/models/provider.js';
import { DEFAULT_OLLAMA_BASE_URL, modelSettingsFromEnv, type ModelSettings } from '../activities/models/settings.js';
import type { ChatMessage, ModelTurnCallbacks, ToolDefinition } from '../activities/models/types.js';
import { messageStream } from './support/wire-servers/anthropic.js';
import { chatCompletionStream } from './support/wire-servers/openai.js';
import { startWireServer, type ReceivedRequest, type WireReply, type WireServer } from './support/wire-servers/sse-server.js';

const weatherTool: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

const hello: ChatMessage[] = [{ role: 'user', content: 'Say hello' }];

/** A second turn of a tool conversation: one call answered, one failed. */
const toolConversation: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris and Oslo?' },
  {
    role: 'assistant',
    content: 'Checking.',
    toolCalls: [
      { id: 'call_1', tool: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'call_2', tool: 'get_weather', arguments: { city: 'Oslo' } },
    ],
  },
  { role: 'tool', toolCallId: 'call_1', toolName: 'get_weather', content: '18°C, sunny' },
  { role: 'tool', toolCallId: 'call_2', toolName: 'get_weather', content: 'weather service unavailable', isError: true },
];

/** Callbacks that record the deltas, and fail if a delta arrives before the previous callback finished. */
function deltaRecorder(signal: AbortSignal = new AbortController().signal) {
  const deltas: string[] = [];
  let busy = false;
  const callbacks: ModelTurnCallbacks = {
    signal,
    async onTextDelta(delta) {
      if (busy) throw new Error('onTextDelta was called before the previous call finished');
      busy = true;
      await new Promise((resolve) => setTimeout(resolve, 2));
      deltas.push(delta);
      busy = false;
    },
  };
  return { deltas, callbacks };
}

/** One model turn with the given settings; callbacks that only record unless given. */
function turn(settings: ModelSettings, model: string, messages: ChatMessage[], tools: ToolDefinition[] = [], callbacks = deltaRecorder().callbacks) {
  return streamModelTurn({ model, messages, tools }, callbacks, settings);
}

/** What the promise rejected with; fails if it resolved. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

async function eventually(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `count` words of a slow answer, one every `pauseMs`: seconds in all, unless cut short. */
const slowWords = (count: number) => Array.from({ length: count }, (_, i) => `w${i} `);

describe('model providers over their wire formats', () => {
  let server: WireServer;
  let nextReply: (request: ReceivedRequest) => WireReply;
  before(async () => {
    server = await startWireServer((request) => nextReply(request));
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    server.abandonedReplies = 0;
  });

  const openai = () => modelSettingsFromEnv({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL });
  const anthropic = () => modelSettingsFromEnv({ ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: server.baseURL });
  const ollama = () => modelSettingsFromEnv({ OLLAMA_BASE_URL: server.baseURL });

  describe('openai (Chat Completions)', () => {
    it('streams text deltas in order, awaiting each, and maps the usage chunk', async () => {
      nextReply = (request) => chatCompletionStream(request, { text: ['Hel', 'lo', ', world'], usage: { prompt_tokens: 12, completion_tokens: 4 } });
      const { deltas, callbacks } = deltaRecorder();
      const result = await turn(openai(), 'openai/gpt-4.1-mini', hello, [], callbacks);

      expect(deltas).to.deep.equal(['Hel', 'lo', ', world']);
      expect(result).to.deep.equal({
        text: 'Hello, world',
        toolCalls: [],
        usage: { prompt_tokens: 12, completion_tokens: 4 },
        finishReason: 'stop',
      });
      const [request] = server.requests;
      expect(request?.path).to.equal('/v1/chat/completions');
      expect(request?.headers.authorization).to.equal('Bearer sk-test');
      expect(request?.body).to.deep.include({ model: 'gpt-4.1-mini', stream: true, stream_options: { include_usage: true } });
      expect(request?.body.messages).to.deep.equal([{ role: 'user', content: 'Say hello' }]);
    });

    it('collects tool calls from index-keyed argument fragments and sends the tools as functions', async () => {
      nextReply = (request) =>
        chatCompletionStream(request, {
          toolCalls: [
            { id: 'call_a', name: 'get_weather', argumentFragments: ['{"ci', 'ty": "Pa', 'ris"}'] },
            { id: 'call_b', name: 'get_weather', argumentFragments: ['{"city":', '"Oslo"}'] },
          ],
          usage: { prompt_tokens: 40, completion_tokens: 22 },
        });
      const { deltas, callbacks } = deltaRecorder();
      const result = await turn(openai(), 'openai/gpt-4.1', hello, [weatherTool], callbacks);

      expect(deltas).to.deep.equal([]);
      expect(result.toolCalls).to.deep.equal([
        { id: 'call_a', tool: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'call_b', tool: 'get_weather', arguments: { city: 'Oslo' } },
      ]);
      expect(result.finishReason).to.equal('tool-calls');
      expect(result.usage).to.deep.equal({ prompt_tokens: 40, completion_tokens: 22 });
      expect(server.requests[0]?.body.tools).to.deep.equal([
        { type: 'function', function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.parameters } },
      ]);
    });

    it('sends a multi-turn tool conversation as assistant tool_calls and tool messages', async () => {
      nextReply = (request) => chatCompletionStream(request, { text: ['Paris is sunny.'], usage: { prompt_tokens: 80, completion_tokens: 5 } });
      await turn(openai(), 'openai/gpt-4.1', toolConversation, [weatherTool]);

      expect(server.requests[0]?.body.messages).to.deep.equal([
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Weather in Paris and Oslo?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C, sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: 'weather service unavailable' },
      ]);
    });

    it('reports usage as null, not zero, when the server sends no usage', async () => {
      nextReply = (request) => chatCompletionStream(request, { text: ['Hi', ' there'], usage: null });
      const result = await turn(openai(), 'openai/gpt-4.1-mini', hello);
      expect(result.text).to.equal('Hi there');
      expect(result.usage).to.deep.equal({ prompt_tokens: null, completion_tokens: null });
    });

    it('stops a slow stream when the signal fires, rejecting with the signal reason', async () => {
      nextReply = (request) => chatCompletionStream(request, { text: slowWords(40), pauseMs: 100 });
      const controller = new AbortController();
      const reason = new Error('cancelled by the test');
      const deltas: string[] = [];
      const onTextDelta = (delta: string) => {
        deltas.push(delta);
        if (deltas.length === 2) controller.abort(reason);
      };
      const started = Date.now();

      const error = await rejection(turn(openai(), 'openai/gpt-4.1-mini', hello, [], { signal: controller.signal, onTextDelta }));
      expect(error).to.equal(reason);
      expect(Date.now() - started).to.be.below(1500); // the whole answer takes 4 s
      expect(deltas).to.deep.equal(['w0 ', 'w1 ']);
      await eventually(() => server.abandonedReplies === 1); // the connection was closed, not drained
    });

    it('refuses tool-call arguments that are not a JSON object, as a retryable error', async () => {
      for (const fragments of [['{"city": "Pa'], ['["Paris"]']]) {
        nextReply = (request) => chatCompletionStream(request, { toolCalls: [{ id: 'call_bad', name: 'get_weather', argumentFragments: fragments }] });
        const error = await rejection(turn(openai(), 'openai/gpt-4.1', hello, [weatherTool]));
        expect(error, fragments[0]).to.be.instanceOf(InvalidModelOutputError);
        expect((error as Error).message).to.include("tool 'get_weather'");
        expect(isRetryableModelError(error)).to.equal(true);
      }
    });

    it('passes a call to a tool it was not offered through, for the workflow to answer', async () => {
      nextReply = (request) => chatCompletionStream(request, { toolCalls: [{ id: 'call_x', name: 'delete_everything', argumentFragments: ['{}'] }] });
      const result = await turn(openai(), 'openai/gpt-4.1', hello, [weatherTool]);
      expect(result.toolCalls).to.deep.equal([{ id: 'call_x', tool: 'delete_everything', arguments: {} }]);
    });

    it('surfaces an HTTP error as a non-retryable APICallError, and a missing key before any request', async () => {
      const body = { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } };
      nextReply = () => ({ kind: 'error', status: 401, body });
      const error = await rejection(turn(openai(), 'openai/gpt-4.1-mini', hello));
      expect(APICallError.isInstance(error)).to.equal(true);
      expect((error as APICallError).statusCode).to.equal(401);
      expect(isRetryableModelError(error)).to.equal(false);

      server.requests.length = 0;
      const missingKey = await rejection(turn(modelSettingsFromEnv({ OPENAI_BASE_URL: server.baseURL }), 'openai/gpt-4.1-mini', hello));
      expect(missingKey).to.be.instanceOf(ModelConfigurationError);
      expect((missingKey as Error).message).to.include('OPENAI_API_KEY');
      expect(server.requests).to.have.length(0);
    });
  });

  describe('anthropic (Messages)', () => {
    it('streams text deltas and maps input and output tokens', async () => {
      nextReply = (request) => messageStream(request, { text: ['Hello', ' from', ' Claude'], usage: { input_tokens: 25, output_tokens: 3 } });
      const { deltas, callbacks } = deltaRecorder();
      const result = await streamModelTurn(
        { model: 'anthropic/claude-sonnet-4-5', messages: hello, tools: [], maxOutputTokens: 256 },
        callbacks,
        anthropic(),
      );

      expect(deltas).to.deep.equal(['Hello', ' from', ' Claude']);
      expect(result).to.deep.equal({
        text: 'Hello from Claude',
        toolCalls: [],
        usage: { prompt_tokens: 25, completion_tokens: 3 },
        finishReason: 'stop',
      });
      const [request] = server.requests;
      expect(request?.path).to.equal('/v1/messages');
      expect(request?.headers['x-api-key']).to.equal('sk-ant-test');
      expect(request?.headers['anthropic-version']).to.be.a('string');
      expect(request?.body).to.deep.include({ model: 'claude-sonnet-4-5', stream: true, max_tokens: 256 });
    });

    it('collects tool_use blocks from input_json_delta fragments and sends the tools with input_schema', async () => {
      nextReply = (request) =>
        messageStream(request, {
          text: ['Let me check.'],
          toolUses: [{ id: 'toolu_01', name: 'get_weather', jsonFragments: ['', '{"city": "Pa', 'ris"}'] }],
          usage: { input_tokens: 300, output_tokens: 45 },
        });
      const { deltas, callbacks } = deltaRecorder();
      const result = await turn(anthropic(), 'anthropic/claude-haiku-4-5', hello, [weatherTool], callbacks);

      expect(deltas).to.deep.equal(['Let me check.']);
      expect(result).to.deep.equal({
        text: 'Let me check.',
        toolCalls: [{ id: 'toolu_01', tool: 'get_weather', arguments: { city: 'Paris' } }],
        usage: { prompt_tokens: 300, completion_tokens: 45 },
        finishReason: 'tool-calls',
      });
      const { tools } = server.requests[0]?.body ?? {};
      expect(tools).to.have.length(1);
      expect(tools[0]).to.deep.include({ name: 'get_weather', description: weatherTool.description, input_schema: weatherTool.parameters });
    });

    it('sends a multi-turn tool conversation as tool_use blocks and one user turn of tool_result blocks', async () => {
      nextReply = (request) => messageStream(request, { text: ['Paris is sunny.'], usage: { input_tokens: 90, output_tokens: 5 } });
      await turn(anthropic(), 'anthropic/claude-sonnet-4-5', toolConversation, [weatherTool]);

      const { body } = server.requests[0]!;
      expect(body.system).to.deep.equal([{ type: 'text', text: 'You are terse.' }]);
      expect(body.messages).to.deep.equal([
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Oslo?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '18°C, sunny' },
            { type: 'tool_result', tool_use_id: 'call_2', content: 'weather service unavailable', is_error: true },
          ],
        },
      ]);
    });

    it('stops a slow stream when the signal fires', async () => {
      nextReply = (request) => messageStream(request, { text: slowWords(40), usage: { input_tokens: 1, output_tokens: 40 }, pauseMs: 100 });
      const controller = new AbortController();
      const started = Date.now();

      const error = await rejection(turn(anthropic(), 'anthropic/claude-sonnet-4-5', hello, [], { signal: controller.signal, onTextDelta: () => controller.abort() }));
      expect(error).to.be.instanceOf(DOMException);
      expect((error as DOMException).name).to.equal('AbortError');
      expect(Date.now() - started).to.be.below(2000); // the whole answer takes 5 s
      await eventually(() => server.abandonedReplies === 1);
    });
  });

  describe('ollama (OpenAI-compatible)', () => {
    it('defaults to the local Ollama endpoint', () => {
      expect(modelSettingsFromEnv({}).ollama.baseURL).to.equal(DEFAULT_OLLAMA_BASE_URL);
      expect(DEFAULT_OLLAMA_BASE_URL).to.equal('http://127.0.0.1:11434/v1');
    });

    it('streams text and tool calls without an API key, asking for usage', async () => {
      nextReply = (request) =>
        chatCompletionStream(request, {
          text: ['Sure', '.'],
          toolCalls: [{ id: 'call_x', name: 'get_weather', argumentFragments: ['{"city":"Lyon"}'] }],
          usage: { prompt_tokens: 31, completion_tokens: 9 },
        });
      const { deltas, callbacks } = deltaRecorder();
      const result = await turn(ollama(), 'ollama/llama3.2', toolConversation, [weatherTool], callbacks);

      expect(deltas).to.deep.equal(['Sure', '.']);
      expect(result).to.deep.equal({
        text: 'Sure.',
        toolCalls: [{ id: 'call_x', tool: 'get_weather', arguments: { city: 'Lyon' } }],
        usage: { prompt_tokens: 31, completion_tokens: 9 },
        finishReason: 'tool-calls',
      });
      const [request] = server.requests;
      expect(request?.path).to.equal('/v1/chat/completions');
      expect(request?.headers.authorization).to.equal(undefined);
      expect(request?.body).to.deep.include({ model: 'llama3.2', stream: true, stream_options: { include_usage: true } });
      expect(request?.body.messages.map((message: any) => message.role)).to.deep.equal(['system', 'user', 'assistant', 'tool', 'tool']);
      expect(request?.body.messages[2].tool_calls[0]).to.deep.include({ id: 'call_1', type: 'function' });
    });

    it('reports usage as null when the server ignores include_usage', async () => {
      nextReply = (request) => chatCompletionStream(request, { text: ['ok'], usage: null });
      const result = await turn(ollama(), 'ollama/qwen2.5:0.5b', hello);
      expect(result.usage).to.deep.equal({ prompt_tokens: null, completion_tokens: null });
      expect(server.requests[0]?.body.model).to.equal('qwen2.5:0.5b');
    });
  });

  describe('model ids', () => {
    it('refuses an unknown provider or a missing model name as configuration errors, without calling anything', async () => {
      for (const model of ['mistral/large', 'gpt-4.1', 'openai/', 'anthropic']) {
        const error = await rejection(turn(openai(), model, hello));
        expect(error, model).to.be.instanceOf(ModelConfigurationError);
        expect(isRetryableModelError(error)).to.equal(false);
      }
      const unknown = await rejection(turn(openai(), 'mistral/large', hello));
      expect((unknown as Error).message).to.include("unknown model provider 'mistral'");
      expect(server.requests).to.have.length(0);
    });

    it('reads provider settings from the environment, treating empty values as unset', () => {
      const settings = modelSettingsFromEnv({ OPENAI_API_KEY: 'a', ANTHROPIC_API_KEY: 'b', ANTHROPIC_BASE_URL: 'http://x/v1', OPENAI_BASE_URL: '' });
      expect(settings).to.deep.equal({
        openai: { apiKey: 'a', baseURL: undefined },
        anthropic: { apiKey: 'b', baseURL: 'http://x/v1' },
        ollama: { baseURL: DEFAULT_OLLAMA_BASE_URL },
      });
    });
  });
});
