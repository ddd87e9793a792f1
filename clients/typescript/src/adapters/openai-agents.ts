// The OpenAI Agents SDK for JavaScript (`@openai/agents`): its `needsApproval`
// interruptions, decided in Slack through hitl-bot. A run that stops with
// `result.interruptions` is handed to `decide`, which files each call, waits for a
// person, and approves or rejects it on `result.state` (a rejection with the words the
// model reads); the run is then resumed with `run(agent, result.state)`, and the SDK
// runs the approved calls through `execute` (claimed, run, reported). No import of the
// SDK: its shapes are restated here, so the client keeps no dependency.

import type { Hitl } from "../client.js";
import type { WaitOptions } from "../types.js";
import { Decisions, type AdapterOptions } from "./decisions.js";

/** An interruption of the run (a RunToolApprovalItem). */
export interface AgentsApprovalItem {
  readonly name?: string | undefined;
  readonly arguments?: string | undefined;
  readonly rawItem: unknown;
}

/** What `decide` reads of a run's result and the state it resumes from. */
export interface AgentsInterrupted<I extends AgentsApprovalItem> {
  readonly interruptions?: readonly I[] | undefined;
  readonly state: {
    approve(item: I): void;
    reject(item: I, options?: { message?: string }): void;
  };
}

/** The third argument the SDK passes a tool's `execute`. */
export interface AgentsCallDetails {
  toolCall?: { callId?: string } | undefined;
}

export type OpenAIAgentsOptions = AdapterOptions;

export class OpenAIAgentsApprovals {
  private readonly decisions: Decisions;

  constructor(hitl: Hitl, opts: OpenAIAgentsOptions = {}) {
    this.decisions = new Decisions(hitl, opts);
  }

  /** Decide every interruption of `result` in Slack, all at once, approving or rejecting
   *  each on `result.state`; how many were decided (0: nothing to resume). Throws
   *  RunStopped when a person stopped the run. */
  async decide<I extends AgentsApprovalItem>(
    result: AgentsInterrupted<I>,
    wait: WaitOptions = {},
  ): Promise<number> {
    const items = result.interruptions ?? [];
    const verdicts = await Promise.all(
      items.map((item) => {
        const raw = (item.rawItem ?? {}) as { callId?: string; id?: string; name?: string };
        const callId = raw.callId ?? raw.id ?? "";
        return this.decisions.decide(callId, item.name ?? raw.name ?? "tool", parse(item.arguments), wait);
      }),
    );
    items.forEach((item, i) => {
      const v = verdicts[i];
      if (v?.approved) result.state.approve(item);
      else result.state.reject(item, v?.reason === undefined ? {} : { message: v.reason });
    });
    return items.length;
  }

  /** A tool's `execute`, run only once approved through `decide`: claimed, run with the
   *  arguments the person approved (they may have edited them), its outcome reported. */
  execute<I, C, R>(
    fn: (input: I, context?: C, details?: AgentsCallDetails) => Promise<R> | R,
  ): (input: I, context?: C, details?: AgentsCallDetails) => Promise<R> {
    return (_input: I, context?: C, details?: AgentsCallDetails) =>
      this.decisions.run(details?.toolCall?.callId, (args) => fn(args as I, context, details));
  }
}

/** The model's arguments (JSON text) as the call's; text that is not JSON, as it is. */
function parse(text: string | undefined): unknown {
  if (text === undefined || text === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
