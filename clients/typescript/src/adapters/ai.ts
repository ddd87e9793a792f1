// The Vercel AI SDK (`ai`, v6): its tool approval, decided in Slack through hitl-bot.
// A tool with `needsApproval` makes generateText/streamText stop with a
// `tool-approval-request`; `respond` files each such call, waits for a person and
// answers with the `tool-approval-response` to append to the messages; the SDK then
// runs the approved calls through `execute` (claimed, run, reported) and hands the
// model the denial's reason for the others. No import of `ai`: its shapes are
// restated here, so the client keeps no dependency.

import type { Hitl } from "../client.js";
import type { WaitOptions } from "../types.js";
import { Decisions, type AdapterOptions } from "./decisions.js";

/** A part of a result's `content` (only `tool-approval-request` parts are read). */
export interface AiContentPart {
  type: string;
}

export interface AiToolApprovalRequest extends AiContentPart {
  type: "tool-approval-request";
  approvalId: string;
  toolCall: { toolCallId: string; toolName: string; input: unknown };
}

export interface AiToolApprovalResponse {
  type: "tool-approval-response";
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/** The tool message to append to the conversation before generating again. */
export interface AiToolMessage {
  role: "tool";
  content: AiToolApprovalResponse[];
}

export type AiSdkOptions = AdapterOptions;

export class AiSdkApprovals {
  private readonly decisions: Decisions;

  constructor(hitl: Hitl, opts: AiSdkOptions = {}) {
    this.decisions = new Decisions(hitl, opts);
  }

  /** Decide every approval request in `content` (a result's `content`) in Slack, all at
   *  once; the tool message answering them, or null when none waits. Throws RunStopped
   *  when a person stopped the run. */
  async respond(content: readonly AiContentPart[], wait: WaitOptions = {}): Promise<AiToolMessage | null> {
    const asked = content.filter(isApprovalRequest);
    if (asked.length === 0) return null;
    const answers = await Promise.all(
      asked.map(async (part): Promise<AiToolApprovalResponse> => {
        const { toolCallId, toolName, input } = part.toolCall;
        // the SDK's approval id is fresh per request: a retried respond finds its request
        const key = `ai-sdk:${part.approvalId}`;
        const verdict = await this.decisions.decide(toolCallId, toolName, input, { ...wait, key });
        const answer: AiToolApprovalResponse = {
          type: "tool-approval-response",
          approvalId: part.approvalId,
          approved: verdict.approved,
        };
        if (verdict.reason !== undefined) answer.reason = verdict.reason;
        return answer;
      }),
    );
    return { role: "tool", content: answers };
  }

  /** A tool's `execute`, run only once approved through `respond`: claimed, run with the
   *  arguments the person approved (they may have edited them), its outcome reported. */
  execute<I, O extends { toolCallId: string }, R>(
    fn: (input: I, options: O) => Promise<R> | R,
  ): (input: I, options: O) => Promise<R> {
    return (_input: I, options: O) =>
      this.decisions.run(options.toolCallId, (args) => fn(args as I, options));
  }
}

function isApprovalRequest(part: AiContentPart): part is AiToolApprovalRequest {
  return part.type === "tool-approval-request";
}
