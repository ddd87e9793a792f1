// The Claude Agent SDK for TypeScript (`@anthropic-ai/claude-agent-sdk`): its
// `canUseTool` callback, deciding through hitl-bot. Claude Code asks it before each call
// it would prompt for (its own Write, Edit, Bash, and your MCP tools); the call is filed
// under the run and decided by the policy, a person in Slack where it says so. Claude
// runs an approved call itself and never says how it went, so the request is claimed and
// closed as handed over before the answer allows it, with the arguments the person
// approved. No import of the SDK: its shapes are restated here.

import * as msg from "../messages.js";
import type { Hitl } from "../client.js";
import { Rejected, RunStopped } from "../errors.js";
import type { Args, Call } from "../types.js";
import type { AdapterOptions } from "./decisions.js";

export type ClaudePermission =
  | { behavior: "allow"; updatedInput: Record<string, unknown> }
  | { behavior: "deny"; message: string; interrupt?: boolean };

/** What the SDK passes the callback beside the tool's name and input. */
export interface ClaudePermissionOptions {
  signal?: AbortSignal;
  toolUseID?: string;
}

export interface ClaudeCanUseTool {
  (toolName: string, input: Record<string, unknown>, options: ClaudePermissionOptions): Promise<ClaudePermission>;
  /** Set once a person stopped the run: the session was interrupted (the SDK's query
   *  then ends in an error); throw this instead, to end the agent. */
  stopped: RunStopped | null;
}

/** A `canUseTool` that decides through hitl-bot: allow with the arguments the person
 *  approved; deny with the words the model reads (a rejection's reason, a deadline, a
 *  correction); deny and interrupt the session when a person stopped the run. */
export function claudeCanUseTool(hitl: Hitl, opts: AdapterOptions = {}): ClaudeCanUseTool {
  const { timeoutSeconds, ...fields } = opts;
  const decide = async (
    toolName: string,
    input: Record<string, unknown>,
    options: ClaudePermissionOptions,
  ): Promise<ClaudePermission> => {
    try {
      const call: Call = { ...fields, tool: toolName, args: input as Args };
      // Claude's id for the call: asking again after an error finds the same request
      if (options.toolUseID) call.idempotencyKey = `claude:${options.toolUseID}`;
      const filed = await hitl.submit(call);
      const approved = await hitl.decision(filed, { timeoutSeconds }, options.signal);
      const claimed = await hitl.claim(approved.id);
      const fence = claimed.fence ?? null;
      await hitl.report(claimed.id, { ok: true, detail: msg.HANDED_TO_CLAUDE, fence });
      return { behavior: "allow", updatedInput: claimed.args };
    } catch (err) {
      if (err instanceof RunStopped) {
        canUseTool.stopped = err;
        return { behavior: "deny", message: err.message, interrupt: true };
      }
      if (err instanceof Rejected) return { behavior: "deny", message: err.message };
      throw err; // the SDK denies a callback that throws, and the model reads why
    }
  };
  const canUseTool: ClaudeCanUseTool = Object.assign(decide, { stopped: null });
  return canUseTool;
}
