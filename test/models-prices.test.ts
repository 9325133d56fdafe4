import { expect } from 'chai';
import { BUILT_IN_PRICES, costUsd, priceFor, priceTableFromEnv, sumUsage } from '../activities/models/prices.js';

const noOverrides = {};

describe('model prices and usage sums', () => {
  describe('costUsd', () => {
    it('computes exact decimal costs per million tokens, trimmed and without exponents', () => {
      // 1234 × 1.25 + 567 × 2.5 = 1542.5 + 1417.5 = 2960 micro-dollars
      expect(costUsd('scripted', { prompt_tokens: 1234, completion_tokens: 567 }, noOverrides)).to.equal('0.00296');
      expect(costUsd('scripted/eval-bot', { prompt_tokens: 1, completion_tokens: 0 }, noOverrides)).to.equal('0.00000125');
      expect(costUsd('openai/gpt-4o-mini', { prompt_tokens: 1, completion_tokens: 1 }, noOverrides)).to.equal('0.00000075');
      // 12345 × 3 + 678 × 15 = 47205 micro-dollars
      expect(costUsd('anthropic/claude-sonnet-4-5', { prompt_tokens: 12345, completion_tokens: 678 }, noOverrides)).to.equal('0.047205');
      expect(costUsd('openai/gpt-4.1-mini', { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 }, noOverrides)).to.equal('2');
      expect(costUsd('openai/gpt-4.1', { prompt_tokens: 0, completion_tokens: 0 }, noOverrides)).to.equal('0');
    });

    it('keeps every digit of long prices', () => {
      const env = { MODEL_PRICES: JSON.stringify({ 'acme/precise': { prompt: '0.333333333333333333333333', completion: '0' } }) };
      expect(costUsd('acme/precise', { prompt_tokens: 3, completion_tokens: 5 }, env)).to.equal('0.000000999999999999999999999999');
    });

    it('prices every Ollama model at zero', () => {
      expect(costUsd('ollama/llama3.2', { prompt_tokens: 5000, completion_tokens: 900 }, noOverrides)).to.equal('0');
      expect(priceFor('ollama/hf.co/org/model:Q4', noOverrides)).to.deep.equal({ prompt: '0', completion: '0' });
    });

    it('is null, not zero, when a token count or the price is unknown', () => {
      expect(costUsd('scripted', { prompt_tokens: null, completion_tokens: 10 }, noOverrides)).to.equal(null);
      expect(costUsd('scripted', { prompt_tokens: 10, completion_tokens: null }, noOverrides)).to.equal(null);
      expect(costUsd('openai/gpt-9-preview', { prompt_tokens: 10, completion_tokens: 10 }, noOverrides)).to.equal(null);
      expect(priceFor('openai/gpt-9-preview', noOverrides)).to.equal(null);
      expect(priceFor('mistral/large', noOverrides)).to.equal(null);
    });

    it('has built-in prices for the common models, as decimal strings', () => {
      for (const model of [
        'openai/gpt-4.1', 'openai/gpt-4.1-mini', 'openai/gpt-4.1-nano', 'openai/gpt-4o', 'openai/gpt-4o-mini', 'openai/o4-mini',
        'anthropic/claude-sonnet-4-5', 'anthropic/claude-opus-4-1', 'anthropic/claude-haiku-4-5', 'scripted',
      ]) {
        const price = priceFor(model, noOverrides);
        expect(price, model).to.not.equal(null);
        expect(price!.prompt, model).to.match(/^\d+(\.\d+)?$/);
        expect(price!.completion, model).to.match(/^\d+(\.\d+)?$/);
      }
      expect(priceFor('scripted', noOverrides)).to.deep.equal({ prompt: '1.25', completion: '2.5' });
    });
  });

  describe('MODEL_PRICES', () => {
    const env = {
      MODEL_PRICES: JSON.stringify({
        'openai/gpt-4.1': { prompt: '1.5', completion: '6' },
        'acme/*': { prompt: '0.1', completion: '0.2' },
        'ollama/big-rented-gpu': { prompt: '0.05', completion: '0.05' },
      }),
    };

    it('merges over the built-ins: overrides win, other built-ins stay', () => {
      expect(priceFor('openai/gpt-4.1', env)).to.deep.equal({ prompt: '1.5', completion: '6' });
      expect(priceFor('openai/gpt-4o', env)).to.deep.equal(BUILT_IN_PRICES['openai/gpt-4o']);
      expect(costUsd('openai/gpt-4.1', { prompt_tokens: 1000, completion_tokens: 1000 }, env)).to.equal('0.0075');
    });

    it('prices a provider with a wildcard, and an exact entry beats the wildcard', () => {
      expect(costUsd('acme/anything', { prompt_tokens: 10, completion_tokens: 10 }, env)).to.equal('0.000003');
      expect(priceFor('ollama/big-rented-gpu', env)).to.deep.equal({ prompt: '0.05', completion: '0.05' });
      expect(priceFor('ollama/llama3.2', env)).to.deep.equal({ prompt: '0', completion: '0' });
    });

    it('is read at call time from the given environment', () => {
      expect(priceFor('acme/anything', {})).to.equal(null);
      expect(priceFor('acme/anything', env)).to.not.equal(null);
    });

    it('rejects malformed configuration with a message naming the problem', () => {
      const cases: Array<[string, RegExp]> = [
        ['{not json', /MODEL_PRICES is not valid JSON/],
        ['[]', /must be a JSON object/],
        [JSON.stringify({ 'acme/x': { prompt: 0.1, completion: '0.2' } }), /MODEL_PRICES\['acme\/x'\]\.prompt must be a decimal string/],
        [JSON.stringify({ 'acme/x': { prompt: '0.1', completion: '-1' } }), /\.completion must be a decimal string/],
        [JSON.stringify({ 'acme/x': { prompt: '1e-6', completion: '0' } }), /\.prompt must be a decimal string/],
        [JSON.stringify({ 'acme/x': { prompt: '0.1' } }), /must be \{"prompt"/],
        [JSON.stringify({ 'acme/x': { prompt: '0.1', completion: '0.2', cached: '0' } }), /must be \{"prompt"/],
        [JSON.stringify({ 'gpt-4.1': { prompt: '0.1', completion: '0.2' } }), /'gpt-4.1' is not a model id/],
      ];
      for (const [value, message] of cases) {
        expect(() => priceTableFromEnv({ MODEL_PRICES: value }), value).to.throw(Error, message);
        expect(() => costUsd('acme/x', { prompt_tokens: 1, completion_tokens: 1 }, { MODEL_PRICES: value }), value).to.throw(Error, message);
      }
    });
  });

  describe('sumUsage', () => {
    it('adds the turns', () => {
      expect(sumUsage([{ prompt_tokens: 10, completion_tokens: 5 }, { prompt_tokens: 20, completion_tokens: 7 }])).to.deep.equal({
        prompt_tokens: 30,
        completion_tokens: 12,
        total_tokens: 42,
      });
      expect(sumUsage([])).to.deep.equal({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    });

    it('makes a part null when any turn did not report it, and the total null with it', () => {
      expect(sumUsage([{ prompt_tokens: 10, completion_tokens: 5 }, { prompt_tokens: null, completion_tokens: 7 }])).to.deep.equal({
        prompt_tokens: null,
        completion_tokens: 12,
        total_tokens: null,
      });
      expect(sumUsage([{ prompt_tokens: 10, completion_tokens: null }, { prompt_tokens: 3, completion_tokens: 4 }])).to.deep.equal({
        prompt_tokens: 13,
        completion_tokens: null,
        total_tokens: null,
      });
    });
  });
});
