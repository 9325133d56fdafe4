/**
 * What is wrong with a POSTed JSON-RPC 2.0 body's envelope, before the MCP SDK reads it, or undefined.
 *
 * The SDK answers a message it cannot parse as one of its own with -32700 (Parse error), which JSON-RPC
 * keeps for text that is not JSON; valid JSON that is no Request object is -32600 (Invalid Request), as
 * is an empty batch, which the SDK took with 202 and no answer (JSON-RPC 2.0 §5, §6). MCP's ids are a
 * string or an integer, never null or a fraction. Only the envelope is checked here: a message's params
 * stay the SDK's (its -32602).
 */
export function jsonRpcEnvelopeProblem(body: unknown): string | undefined {
  if (Array.isArray(body)) {
    if (body.length === 0) return 'an empty batch';
    for (const [index, message] of body.entries()) {
      const problem = messageProblem(message);
      if (problem) return `message ${index} of the batch: ${problem}`;
    }
    return undefined;
  }
  return messageProblem(body);
}

function messageProblem(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return 'not a JSON-RPC message (an object)';
  const fields = message as Record<string, unknown>;
  if (fields.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('method' in fields) {
    if (typeof fields.method !== 'string') return '"method" must be a string';
    return 'id' in fields && !isMcpId(fields.id) ? '"id" must be a string or an integer' : undefined;
  }
  // A response, to a request of the server's: the one kind of message without a method.
  if (!('result' in fields) && !('error' in fields)) return 'neither a request ("method") nor a response ("result" or "error")';
  // An error may leave out the id of a request it could not read (the SDK's reading of JSON-RPC §5).
  if ('error' in fields && !('id' in fields)) return undefined;
  if (!isMcpId(fields.id)) return 'a response needs the "id" (a string or an integer) of the request it answers';
  return undefined;
}

function isMcpId(id: unknown): boolean {
  return typeof id === 'string' || Number.isSafeInteger(id);
}
