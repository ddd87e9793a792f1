// Every sentence the client shows a developer or hands a model, in one place. The ones
// a model reads as a tool's result are the server's own words (bot/messages.py).

export const CALL_STEERED = (text: string): string => `Cancelled. The person says: ${text}`;
export const CALL_HARD_STOP = (text: string): string =>
  `Cancelled. The person stopped the run: ${text}`;
export const CALL_RUN_STOPPED = "Cancelled: the run was stopped by a person. Do nothing more.";

export const REJECTED = (tool: string, actor: string, reason: string, text: string | null): string =>
  `${tool} was rejected by ${actor} (${reason})${text ? `: ${text}` : ""}; it did not run.`;
export const AUTO_REJECTED = (tool: string): string =>
  `Nobody decided on ${tool} in time; the policy rejected it and it did not run.`;
export const NEVER_CLAIMED = (tool: string): string =>
  `${tool} was approved but not claimed in time; it was cancelled and did not run.`;
export const CANCELLED = (tool: string, actor: string, reason: string): string =>
  `${tool} was withdrawn by ${actor} (${reason}); it did not run.`;
export const CALLER_TIMEOUT = (tool: string, seconds: number): string =>
  `${tool}: no decision within ${seconds} s; the request was withdrawn; it did not run.`;
export const SUPERSEDED_NO_TEXT = (tool: string): string =>
  `Cancelled. A person's correction withdrew ${tool} while it waited; it did not run. ` +
  "Ask for their words in the run's thread before you go on.";
export const ALREADY_RAN = (tool: string, id: string, state: string): string =>
  `${tool} (request ${id}) is already ${state}: it was claimed before, so it will not run again.`;
export const QUESTION_UNANSWERED = (question: string, state: string): string =>
  `Nobody answered ${JSON.stringify(question.slice(0, 80))} (${state}).`;
export const QUESTION_STOPPED = "The run was stopped while its question waited: do nothing more.";
export const API_UNREACHABLE = (url: string, error: string): string =>
  `Cannot reach the hitl-bot API at ${url}: ${error}; fix: check the url given to Hitl.`;
export const API_ERROR = (status: number, detail: string): string =>
  `The hitl-bot API answered ${status}: ${detail}`;
export const NEED_URL_AND_TOKEN =
  "Hitl needs the API's url and a token (HITL_API_URL and HITL_API_TOKEN for Hitl.fromEnv()).";
export const NOT_DECIDED = (callId: string): string =>
  `Tool call ${callId} was not approved through hitl-bot, so it did not run: ` +
  "decide the framework's approval requests with the adapter (respond / decide) first.";
export const HANDED_TO_CLAUDE =
  "Handed to Claude Code, which runs the call and does not report how it went.";
