import { frame, type LoggedEvent } from '../sse.js';

/**
 * What a publishable key's caller (a website's visitor) sees of a run's events: the run's own events,
 * the reply's text and the question, never the tool calls, their arguments and results, or what a
 * guardrail found. Events it does not see are left out of the stream (an empty frame); the `id`s of
 * the rest are the log's, so Last-Event-ID resumes as for any caller.
 */
export function visitorFrame(visitorToken?: string): (event: LoggedEvent) => string {
  return (event) => {
    const data = visibleData(event);
    if (!data) return '';
    // Handed out once, in the stream that started the thread: never stored in the log.
    if (visitorToken && event.type === 'run.created') data.visitor_token = visitorToken;
    return frame({ ...event, data });
  };
}

function visibleData(event: LoggedEvent): Record<string, unknown> | undefined {
  if (event.type.startsWith('run.') || event.type === 'message.delta' || event.type === 'attempt.reset') return { ...event.data };
  if (event.type === 'message.completed') {
    // Its tool_calls are the tool arguments; usage is the workspace's business.
    const { turn, text, finish_reason } = event.data;
    return { turn, text, finish_reason };
  }
  return undefined;
}
