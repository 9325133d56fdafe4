import { expect } from 'chai';
import { ModelConfigurationError } from '../activities/models/errors.js';
import { streamModelTurn } from '../activities/models/provider.js';
import type { ChatMessage, ModelTurnCallbacks, ModelTurnRequest, ScriptTurn } from '../activities/models/types.js';

const messages: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' }, // 14 characters
  { role: 'user', content: 'Say hello' }, // 9 characters
];

function scripted(script: ScriptTurn[], scriptPosition = 0, model = 'scripted'): ModelTurnRequest {
  return { model, messages, tools: [], script, scriptPosition };
}

/** Records deltas with when they arrived; the callback is async to show each one is awaited. */
function recorder(signal: AbortSignal = new AbortController().signal) {
  const deltas: string[] = [];
  const times: number[] = [];
  const callbacks: ModelTurnCallbacks = {
    signal,
    async onTextDelta(delta) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      deltas.push(delta);
      times.push(Date.now());
    },
  };
  return { deltas, times, callbacks };
}

describe('scripted model provider', () => {
  it('streams text word by word, in deltas that join back to the text', async () => {
    const { deltas, callbacks } = recorder();
    const result = await streamModelTurn(scripted([{ text: 'The quick  brown fox.\n' }]), callbacks);
    expect(deltas).to.deep.equal(['The ', 'quick  ', 'brown ', 'fox.\n']);
    expect(result.text).to.equal('The quick  brown fox.\n');
    expect(result.toolCalls).to.deep.equal([]);
    expect(result.finishReason).to.equal('stop');
  });

  it('replays the turn at scriptPosition, for `scripted` and `scripted/<name>` alike', async () => {
    const script = [{ text: 'first turn' }, { text: 'second turn' }];
    expect((await streamModelTurn(scripted(script, 1), recorder().callbacks)).text).to.equal('second turn');
    expect((await streamModelTurn(scripted(script, 0, 'scripted/support-bot'), recorder().callbacks)).text).to.equal('first turn');
    expect((await streamModelTurn({ model: 'scripted', messages, tools: [], script }, recorder().callbacks)).text).to.equal('first turn');
  });

  it('answers tool calls with ids call_<position>_<index>, alone or after text', async () => {
    const script: ScriptTurn[] = [
      { text: 'hello' },
      { tool_calls: [{ tool: 'get_weather', arguments: { city: 'Paris' } }, { tool: 'now' }] },
      { text: 'One more check.', tool_calls: [{ tool: 'get_weather', arguments: { city: 'Oslo' } }] },
    ];
    const toolsOnly = await streamModelTurn(scripted(script, 1), recorder().callbacks);
    expect(toolsOnly.text).to.equal('');
    expect(toolsOnly.finishReason).to.equal('tool-calls');
    expect(toolsOnly.toolCalls).to.deep.equal([
      { id: 'call_1_0', tool: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'call_1_1', tool: 'now', arguments: {} },
    ]);

    const { deltas, callbacks } = recorder();
    const both = await streamModelTurn(scripted(script, 2), callbacks);
    expect(deltas).to.deep.equal(['One ', 'more ', 'check.']);
    expect(both.toolCalls).to.deep.equal([{ id: 'call_2_0', tool: 'get_weather', arguments: { city: 'Oslo' } }]);
    expect(both.finishReason).to.equal('tool-calls');
  });

  it('answers empty text to a turn with neither text nor tool calls', async () => {
    const { deltas, callbacks } = recorder();
    const result = await streamModelTurn(scripted([{}]), callbacks);
    expect(deltas).to.deep.equal([]);
    expect(result).to.deep.include({ text: '', toolCalls: [], finishReason: 'stop' });
  });

  describe('usage', () => {
    it('reports the given usage as is', async () => {
      const given = { prompt_tokens: 1234, completion_tokens: 567 };
      const result = await streamModelTurn(scripted([{ text: 'hi', usage: given }]), recorder().callbacks);
      expect(result.usage).to.deep.equal({ prompt_tokens: 1234, completion_tokens: 567 });
    });

    it('reports null counts, not zeros, for `usage: null`', async () => {
      const result = await streamModelTurn(scripted([{ text: 'hi', usage: null }]), recorder().callbacks);
      expect(result.usage).to.deep.equal({ prompt_tokens: null, completion_tokens: null });
    });

    it('counts omitted usage from characters: a quarter, rounded up, at least 1', async () => {
      // prompt: 14 + 9 = 23 characters → 6; completion: 18 characters → 5
      const text = await streamModelTurn(scripted([{ text: 'Hello there friend' }]), recorder().callbacks);
      expect(text.usage).to.deep.equal({ prompt_tokens: 6, completion_tokens: 5 });

      const silentPrompt: ModelTurnRequest = { ...scripted([{ tool_calls: [{ tool: 'now' }] }]), messages: [{ role: 'user', content: '' }] };
      const toolsOnly = await streamModelTurn(silentPrompt, recorder().callbacks);
      expect(toolsOnly.usage).to.deep.equal({ prompt_tokens: 1, completion_tokens: 1 });
    });
  });

  describe('delay and cancellation', () => {
    it('spreads delay_ms across the deltas', async () => {
      const { deltas, times, callbacks } = recorder();
      const started = Date.now();
      await streamModelTurn(scripted([{ text: 'one two three four', delay_ms: 400 }]), callbacks);
      const elapsed = Date.now() - started;
      expect(deltas).to.have.length(4);
      expect(elapsed).to.be.within(380, 1500);
      expect(times[0]! - started).to.be.within(80, 350); // the first delta waits its share, not the whole delay
    });

    it('waits delay_ms before a turn that only calls tools', async () => {
      const started = Date.now();
      await streamModelTurn(scripted([{ tool_calls: [{ tool: 'now' }], delay_ms: 200 }]), recorder().callbacks);
      expect(Date.now() - started).to.be.at.least(190);
    });

    it('rejects promptly with the signal reason when aborted mid-turn, streaming nothing more', async () => {
      const controller = new AbortController();
      const { deltas, callbacks } = recorder(controller.signal);
      const reason = new Error('run cancelled');
      const started = Date.now();
      setTimeout(() => controller.abort(reason), 150);

      const slowTextTurn = scripted([{ text: 'a b c d e f g h i j', delay_ms: 10_000 }]);
      const error = await streamModelTurn(slowTextTurn, callbacks).catch((e: unknown) => e);
      expect(error).to.equal(reason);
      expect(Date.now() - started).to.be.below(500);
      expect(deltas).to.deep.equal([]); // the first delta was due after 1 s
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(deltas).to.deep.equal([]);
    });

    it('rejects with an AbortError when aborted without a reason, and at once when already aborted', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const slowToolTurn = scripted([{ tool_calls: [{ tool: 'now' }], delay_ms: 5_000 }]);
      const error = await streamModelTurn(slowToolTurn, recorder(controller.signal).callbacks).catch((e: unknown) => e);
      expect((error as Error).name).to.equal('AbortError');

      const { deltas, callbacks } = recorder(AbortSignal.abort());
      const immediate = await streamModelTurn(scripted([{ text: 'never said' }]), callbacks).catch((e: unknown) => e);
      expect((immediate as Error).name).to.equal('AbortError');
      expect(deltas).to.deep.equal([]);
    });
  });

  it('fails with a ModelConfigurationError past the end of the script', async () => {
    const exhausted = await streamModelTurn(scripted([{ text: 'only turn' }], 1), recorder().callbacks).catch((e: unknown) => e);
    expect(exhausted).to.be.instanceOf(ModelConfigurationError);
    expect((exhausted as Error).message).to.match(/^script exhausted: .*turn 2 .* 1 turn/);

    const noScript = await streamModelTurn({ model: 'scripted', messages, tools: [] }, recorder().callbacks).catch((e: unknown) => e);
    expect(noScript).to.be.instanceOf(ModelConfigurationError);
  });
});
