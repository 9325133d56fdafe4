import { objectSchema, type WorkflowBuiltinTool } from './definition.js';

/** Pauses the run until a person answers (POST /v1/runs/{id}/answer); the question's id is `q_<step index>`. */
export const askHuman: WorkflowBuiltinTool = {
  runsIn: 'workflow',
  description: 'Ask a person a question and wait for the answer. The run pauses until someone answers.',
  parameters: objectSchema({ question: { type: 'string', description: 'The question to ask.' } }, ['question']),
  async run(args, run) {
    if (typeof args.question !== 'string' || !args.question) throw new Error('ask_human needs a "question"');
    return { answer: await run.askHuman(`q_${run.stepIndex}`, args.question) };
  },
};
