import type { Db } from '../../db/database.js';
import { answerPage, redirect } from '../oauth/authorize-endpoint.js';
import { lastMessageText } from '../../db/run-events.js';
import { findRun, listCompletedRunsBefore, listPausedQuestionKeys, listPausedRuns } from '../../db/runs.js';
import { readAsTenant } from '../../db/tenant-reads.js';
import { answerPausedRun } from '../answer-run.js';
import { ApiError } from '../errors.js';
import { Html, html } from '../oauth/html.js';
import type { Workspace } from '../oauth/users.js';
import { consolePage, messagePage, time } from './layout.js';
import { streamSnapshots } from './live.js';
import { SharedSnapshots } from './shared-snapshot.js';
import {
  answerText,
  currentWorkspaces,
  findInWorkspaces,
  isBackgroundPost,
  readCheckedForm,
  sendStream,
  type Person,
  type SignedInRequest,
} from './request.js';

/**
 * The inbox: the questions paused runs wait on in the person's workspaces (or the one the switcher
 * chose), newest first, each with its context and an answer form. Answering is the same Temporal update
 * as POST /v1/runs/{id}/answer; the page's event stream takes answered questions away and brings new ones.
 */

const MAX_ANSWER_LENGTH = 200_000;
/** Earlier turns of the thread shown above a question. */
const EARLIER_TURNS = 3;

/** A waiting question: the run, the question it waits on, and its workspace. */
interface QuestionKey {
  /** `runId:questionId`: a run answered that asks again is a new card. */
  key: string;
  runId: string;
  askedAt: string;
  workspace: Workspace;
}

export async function showInbox(request: SignedInRequest): Promise<void> {
  const { ctx, deps, person } = request;
  const scope = chosenWorkspace(person, ctx.query.workspace);
  if (scope === 'unknown') return answerPage(ctx, 404, messagePage(request.signedIn(), 'Not found', 'You are not a member of that workspace.'));
  const keys = await waitingQuestionKeys(deps.db, scope ? [scope] : person.workspaces);
  const cards = await questionCards(deps.db, keys, person.workspaces.length > 1, request.page.csrfToken);
  const shown = keys.filter((k) => cards.has(k.key));
  // The notice names only a run of the person's: a link cannot make the page claim anything else.
  const answeredId = typeof ctx.query.answered === 'string' ? ctx.query.answered : undefined;
  const answered = answeredId
    ? (await findInWorkspaces(deps.db, person, answeredId, (db, tenantId) => readAsTenant(db, tenantId, (reader) => findRun(reader, tenantId, answeredId))))?.row.id
    : undefined;
  const events = `/console/inbox/events${scope ? `?workspace=${encodeURIComponent(scope.id)}` : ''}`;
  const body = html`<h1>Inbox <span class="badge" id="inbox-count">${String(shown.length)}</span></h1>
${answered ? html`<p class="notice" role="status">Your answer to run <code>${answered}</code> was sent; the run goes on.</p>` : ''}
<p class="meta">Questions your agents asked with <code>ask_human</code>${scope ? html` in <strong>${scope.name}</strong>` : ''}, newest first. They leave this page as soon as anyone answers them.</p>
<p id="inbox-empty" class="empty"${shown.length > 0 ? new Html(' hidden') : ''}>No agent is waiting for an answer.</p>
<section id="inbox" data-events="${events}">
${shown.map((k) => cards.get(k.key)!)}
</section>`;
  answerPage(ctx, 200, consolePage(request.signedIn(scope), 'Inbox', body));
}

/**
 * The inbox's event stream: `{present: [keys, newest first], added: {key: card HTML}}` whenever the
 * waiting questions change, each key `runId:questionId`. Each wake-up first re-checks the session and
 * the memberships (ending the stream when signed out), then reads only which runs wait on which
 * question; cards (and their context) are built for new questions only.
 */
export async function streamInbox(request: SignedInRequest): Promise<void> {
  const { ctx, deps, person } = request;
  const scope = chosenWorkspace(person, ctx.query.workspace);
  if (scope === 'unknown') return answerText(ctx, 404, 'You are not a member of that workspace.');
  let shown: string[] | undefined;
  const reply = streamSnapshots(ctx, {
    // Any run's event may be a question asked or answered in one of the workspaces: look again.
    subscribe: (wake) => deps.events.subscribeAll(wake),
    next: async (since) => {
      const workspaces = await currentWorkspaces(request);
      if (!workspaces) return { final: true };
      // A person removed from a workspace stops seeing its questions.
      const scopes = scope ? workspaces.filter((w) => w.id === scope.id) : workspaces;
      // The same workspaces wait on the same questions for every viewer: read once for those that woke together.
      const scopeKey = scopes.map((w) => w.id).sort().join(',');
      const keys = await waitingKeys.get(scopeKey, since, () => waitingQuestionKeys(deps.db, scopes));
      if (shown && keys.length === shown.length && keys.every((k, i) => k.key === shown![i])) return {};
      const before = new Set(shown ?? []);
      const cards = await questionCards(deps.db, keys.filter((k) => !before.has(k.key)), workspaces.length > 1, request.page.csrfToken);
      // A question answered between the two reads has no card: it is left out until it is shown.
      const present = keys.filter((k) => before.has(k.key) || cards.has(k.key)).map((k) => k.key);
      const added = Object.fromEntries([...cards].map(([key, card]) => [key, card.text]));
      shown = present;
      return { data: { present, added } };
    },
  });
  sendStream(ctx, reply);
}

const waitingKeys = new SharedSnapshots<Awaited<ReturnType<typeof waitingQuestionKeys>>>();

/** POST /console/runs/{id}/answer: answers the run's question, as POST /v1/runs/{id}/answer does. */
export async function submitAnswer(request: SignedInRequest): Promise<void> {
  const { ctx, deps, person } = request;
  const form = await readCheckedForm(request);
  if (!form) return;
  const runId = ctx.params.id!;
  const answer = form.get('answer') ?? '';
  const questionId = form.get('question_id') || undefined;
  const refuse = (status: number, title: string, message: string) =>
    isBackgroundPost(ctx) ? answerText(ctx, status, message) : answerPage(ctx, status, messagePage(request.signedIn(), title, message));
  if (answer.trim() === '') return refuse(400, 'No answer', 'Write an answer first.');
  // Code points, as the API's maxLength counts them.
  if ([...answer].length > MAX_ANSWER_LENGTH) return refuse(400, 'Answer too long', `An answer may have at most ${MAX_ANSWER_LENGTH} characters.`);
  const found = await findInWorkspaces(deps.db, person, runId, (db, tenantId) => readAsTenant(db, tenantId, (reader) => findRun(reader, tenantId, runId)));
  if (!found) return refuse(404, 'Not found', `There is no run ${runId} in your workspaces.`);
  try {
    await answerPausedRun(deps.temporal, found.row, { answer, questionId });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'conflict') {
      return refuse(409, 'Already answered', 'This question was answered already, or the run no longer waits for an answer.');
    }
    throw err;
  }
  if (isBackgroundPost(ctx)) {
    ctx.status = 204;
    return;
  }
  redirect(ctx, 303, `/console/inbox?answered=${encodeURIComponent(runId)}`);
}

/** The workspace `?workspace=` names: undefined for all of them, 'unknown' when it is none of the person's. */
function chosenWorkspace(person: Person, requested: unknown): Workspace | undefined | 'unknown' {
  if (typeof requested !== 'string' || requested === '') return undefined;
  return person.workspaces.find((w) => w.id === requested) ?? 'unknown';
}

/** Which runs wait on which question in `workspaces`, newest first: one small query per workspace. */
async function waitingQuestionKeys(db: Db, workspaces: Workspace[]): Promise<QuestionKey[]> {
  const keys: QuestionKey[] = [];
  for (const workspace of workspaces) {
    const rows = await readAsTenant(db, workspace.id, (reader) => listPausedQuestionKeys(reader, workspace.id));
    for (const row of rows) keys.push({ key: `${row.runId}:${row.questionId}`, runId: row.runId, askedAt: row.askedAt, workspace });
  }
  return keys.sort((a, b) => (a.askedAt === b.askedAt ? (a.runId < b.runId ? 1 : -1) : a.askedAt < b.askedAt ? 1 : -1));
}

/** The cards of `keys` whose run still waits on that question, by key. */
async function questionCards(db: Db, keys: QuestionKey[], nameWorkspace: boolean, csrf: string): Promise<Map<string, Html>> {
  const cards = new Map<string, Html>();
  const byWorkspace = new Map<string, { workspace: Workspace; runIds: string[] }>();
  for (const k of keys) {
    const entry = byWorkspace.get(k.workspace.id) ?? { workspace: k.workspace, runIds: [] };
    entry.runIds.push(k.runId);
    byWorkspace.set(k.workspace.id, entry);
  }
  const wanted = new Set(keys.map((k) => k.key));
  for (const { workspace, runIds } of byWorkspace.values()) {
    const runs = await readAsTenant(db, workspace.id, (reader) => listPausedRuns(reader, workspace.id, runIds));
    for (const run of runs) {
      const question = run.pending_question!;
      const key = `${run.id}:${question.id}`;
      if (!wanted.has(key)) continue; // answered and asked again since: the next wake-up shows it
      const context = await runContext(db, workspace.id, run.id, run.thread_id);
      cards.set(key, questionCard(key, { ...run, pending_question: question }, nameWorkspace ? workspace : undefined, context, csrf));
    }
  }
  return cards;
}

interface QuestionContext {
  earlier: { input: string; output: string | null }[];
  /** What the agent wrote in this run before it asked, if anything. */
  said: string | undefined;
}

async function runContext(db: Db, tenantId: string, runId: string, threadId: string): Promise<QuestionContext> {
  const earlier = await readAsTenant(db, tenantId, (reader) => listCompletedRunsBefore(reader, tenantId, threadId, runId, EARLIER_TURNS));
  return { earlier, said: await lastMessageText(db, tenantId, runId) };
}

function questionCard(
  key: string,
  run: { id: string; agent_id: string; agent_name: string | null; input: string; pending_question: { id: string; question: string; asked_at: string } },
  workspace: Workspace | undefined,
  context: QuestionContext,
  csrf: string,
): Html {
  const question = run.pending_question;
  const answerId = `answer-${run.id}`;
  return html`<article class="card" id="question-${run.id}" data-run-id="${run.id}" data-key="${key}">
<div class="meta"><strong>${run.agent_name ?? run.agent_id}</strong>${workspace ? html` · ${workspace.name}` : ''} · asked ${time(question.asked_at)} · <a href="/console/runs/${run.id}">${run.id}</a></div>
<p class="question">${question.question}</p>
<details>
<summary class="meta">Context</summary>
${context.earlier.map((turn) => html`<div class="meta">Earlier, the user wrote</div><div class="context">${turn.input}</div>
<div class="meta">and the agent answered</div><div class="context">${turn.output ?? ''}</div>`)}
<div class="meta">The run's input</div><div class="context">${run.input}</div>
${context.said ? html`<div class="meta">The agent wrote, before asking</div><div class="context">${context.said}</div>` : ''}
</details>
<form method="post" action="/console/runs/${run.id}/answer" data-answer>
<input type="hidden" name="csrf_token" value="${csrf}">
<input type="hidden" name="question_id" value="${question.id}">
<label for="${answerId}">Your answer</label>
<textarea id="${answerId}" name="answer" required maxlength="${String(MAX_ANSWER_LENGTH)}"></textarea>
<p class="error" role="alert"></p>
<div class="buttons"><button class="primary" type="submit">Send answer</button></div>
</form>
</article>
`;
}
