/**
 * The hosted chat page's script, inlined with a CSP nonce (no build step). It talks to the API with the
 * deployment's publishable key like any client would: POST /v1/agents/{id}/runs answers the run's
 * events as a stream (read with fetch, since EventSource cannot send the key), `message.delta` events
 * are shown as they arrive, `run.paused` shows the question with an answer box, and answering follows
 * the rest with GET /v1/runs/{id}/events from the last event seen. The thread id, its visitor token
 * (sent as X-Visitor-Token: the key is public, the token is this visitor's) and the transcript are kept
 * in localStorage, so a reload continues the same conversation; a thread the API no longer knows (404)
 * is forgotten and the message starts a new one.
 */
export const CHAT_PAGE_SCRIPT = String.raw`
(() => {
  const config = JSON.parse(document.getElementById('deployment').textContent);
  const storageKey = 'agent-platform:deployment:' + config.slug;
  const log = document.getElementById('log');
  const composer = document.getElementById('composer');
  const input = document.getElementById('message');
  const status = document.getElementById('status');
  let state = load();
  let busy = false;

  function load() {
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey) || 'null');
      if (saved && Array.isArray(saved.messages)) return saved;
    } catch (e) {}
    return fresh();
  }
  function fresh() {
    return { threadId: null, visitorToken: null, messages: [], pending: null };
  }
  // A thread the API answers 404 for (gone, or a token this browser lost): start over.
  function forgetThread() {
    state.threadId = null;
    state.visitorToken = null;
    state.pending = null;
    save();
  }
  function save() {
    try { localStorage.setItem(storageKey, JSON.stringify(state)); } catch (e) {}
  }
  function bubble(role, text) {
    const el = document.createElement('div');
    el.className = 'msg ' + role;
    el.textContent = text;
    log.appendChild(el);
    el.scrollIntoView({ block: 'end' });
    return el;
  }
  function remember(role, text) {
    state.messages.push({ role, text });
    save();
  }
  function setBusy(value, note) {
    busy = value;
    composer.querySelector('button').disabled = value;
    status.textContent = note || '';
  }

  function api(method, path, body, headers) {
    const all = Object.assign({ Authorization: 'Bearer ' + config.key }, headers || {});
    if (state.visitorToken) all['X-Visitor-Token'] = state.visitorToken;
    if (body !== undefined) all['Content-Type'] = 'application/json';
    return fetch(path, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  }
  async function errorOf(response) {
    try { return (await response.json()).error.message; } catch (e) { return 'HTTP ' + response.status; }
  }

  function parseFrame(block) {
    let event = 'message', data = '', id = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data += (data ? '\n' : '') + value;
      else if (field === 'id') id = Number(value);
    }
    return data ? { event, id, data: JSON.parse(data) } : null;
  }

  // Follows a run's event stream into the reply bubble until the stream ends (the run ended or paused).
  async function follow(response, reply, runId) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '', text = '', turn = null, deltas = Number(reply.dataset.deltas || 0);
    let outcome = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = parseFrame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (!frame) continue;
        const data = frame.data;
        if (frame.event === 'run.created') {
          runId = data.run_id;
          state.threadId = data.thread_id;
          if (data.visitor_token) state.visitorToken = data.visitor_token;
          save();
        } else if (frame.event === 'message.delta') {
          if (data.turn !== turn) { turn = data.turn; text = ''; }
          text += data.delta;
          reply.textContent = text;
          reply.dataset.deltas = String(++deltas);
          reply.scrollIntoView({ block: 'end' });
        } else if (frame.event === 'attempt.reset') {
          text = '';
          reply.textContent = '';
        } else if (frame.event === 'run.paused') {
          outcome = { paused: { runId, questionId: data.question_id, question: data.question, after: frame.id } };
        } else if (frame.event === 'run.completed') {
          outcome = { text: data.output == null ? text : data.output };
        } else if (frame.event === 'run.failed') {
          outcome = { error: 'The agent failed: ' + ((data.error && data.error.message) || 'unknown error') };
        } else if (frame.event === 'run.cancelled') {
          outcome = { error: 'The run was cancelled.' };
        }
      }
    }
    if (!outcome) outcome = { error: 'The connection ended before the answer did. Send your message again.' };
    if (outcome.paused) {
      if (!text) reply.remove();
      else remember('agent', text);
      state.pending = outcome.paused;
      save();
      showQuestion(outcome.paused);
      return;
    }
    reply.classList.remove('pending');
    if (outcome.error) {
      reply.classList.add('error');
      reply.textContent = outcome.error;
      remember('error', outcome.error);
    } else {
      reply.textContent = outcome.text;
      remember('agent', outcome.text);
    }
    setBusy(false);
  }

  function showQuestion(pending) {
    setBusy(true, 'The agent is waiting for your answer.');
    const box = document.createElement('form');
    box.className = 'question';
    const question = document.createElement('p');
    question.textContent = pending.question;
    const answer = document.createElement('input');
    answer.name = 'answer';
    answer.required = true;
    answer.autocomplete = 'off';
    answer.setAttribute('aria-label', 'Your answer');
    const button = document.createElement('button');
    button.type = 'submit';
    button.textContent = 'Answer';
    box.append(question, answer, button);
    log.appendChild(box);
    box.scrollIntoView({ block: 'end' });
    answer.focus();
    box.addEventListener('submit', async (event) => {
      event.preventDefault();
      button.disabled = true;
      const response = await api('POST', '/v1/runs/' + encodeURIComponent(pending.runId) + '/answer', { answer: answer.value, question_id: pending.questionId });
      if (response.status === 404) {
        box.remove();
        forgetThread();
        setBusy(false, 'That conversation is gone; your next message starts a new one.');
        return;
      }
      if (!response.ok) {
        button.disabled = false;
        status.textContent = await errorOf(response);
        return;
      }
      box.remove();
      remember('question', pending.question);
      bubble('question', pending.question);
      remember('user', answer.value);
      bubble('user', answer.value);
      state.pending = null;
      save();
      setBusy(true, '');
      const reply = bubble('agent pending', '');
      const rest = await api('GET', '/v1/runs/' + encodeURIComponent(pending.runId) + '/events', undefined, { 'Last-Event-ID': String(pending.after) });
      if (!rest.ok) return failed(reply, await errorOf(rest));
      await follow(rest, reply, pending.runId).catch((err) => failed(reply, String(err)));
    });
  }

  function failed(reply, message) {
    reply.classList.remove('pending');
    reply.classList.add('error');
    reply.textContent = message;
    setBusy(false);
  }

  composer.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || busy) return;
    input.value = '';
    bubble('user', text);
    remember('user', text);
    setBusy(true, '');
    const reply = bubble('agent pending', '');
    const start = () => api('POST', '/v1/agents/' + encodeURIComponent(config.agentId) + '/runs', state.threadId ? { input: text, thread_id: state.threadId } : { input: text });
    let response = await start();
    if (response.status === 404 && state.threadId) {
      forgetThread();
      status.textContent = 'That conversation is gone; this message starts a new one.';
      response = await start();
    }
    if (!response.ok) {
      const message = await errorOf(response);
      remember('error', message);
      return failed(reply, message);
    }
    await follow(response, reply, null).catch((err) => failed(reply, String(err)));
  });

  document.getElementById('restart').addEventListener('click', () => {
    state = fresh();
    save();
    log.replaceChildren();
    setBusy(false);
  });

  for (const message of state.messages) {
    const el = bubble(message.role, message.text);
    if (message.role === 'error') el.classList.add('error');
  }
  if (state.pending) showQuestion(state.pending);
  input.focus();
})();
`;
