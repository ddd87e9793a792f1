// What every framework adapter shares. A framework pauses a tool call for approval and
// later runs it itself; between the two, the call is filed and decided through
// hitl-bot, and the decision is held by the framework's call id until the framework
// runs the call: then it is claimed, run with the arguments the person approved, and
// its outcome reported. A call the framework runs with no approval held here does not
// run (fail closed: the framework may have been told "approved" by someone else).

import * as msg from "../messages.js";
import { describe, type Hitl } from "../client.js";
import { HitlError, Rejected, RunStopped } from "../errors.js";
import type { ApprovalRequest, Args, Call, WaitOptions } from "../types.js";

/** Where and how the framework's calls are filed: the fields of a Call every call shares. */
export interface AdapterOptions extends Omit<Call, "tool" | "args" | "idempotencyKey">, WaitOptions {}

/** A person's decision on one paused call, in the shape frameworks take it. */
export interface Verdict {
  approved: boolean;
  /** Denied: why, in words the model reads as the tool's result. */
  reason?: string;
}

/** For one call: its idempotency key, and a deadline of its own. */
export interface Extra extends WaitOptions {
  key?: string;
}

export class Decisions {
  private readonly approved = new Map<string, ApprovalRequest>();

  constructor(
    readonly hitl: Hitl,
    private readonly opts: AdapterOptions,
  ) {}

  /** File the call and wait for a person. Approved: held for `run`. Rejected, timed out
   *  or steered: denied, with the words the model should read. A stopped run throws
   *  RunStopped: the agent must end, not tell the model. */
  async decide(callId: string, tool: string, input: unknown, more: Extra = {}): Promise<Verdict> {
    const { timeoutSeconds: ownTimeout, ...fields } = this.opts;
    const timeoutSeconds = more.timeoutSeconds ?? ownTimeout;
    try {
      const call: Call = { ...fields, tool, args: argsOf(input) };
      if (more.key !== undefined) call.idempotencyKey = more.key;
      const filed = await this.hitl.submit(call);
      const approved = await this.hitl.decision(filed, { timeoutSeconds });
      this.approved.set(callId, approved);
      return { approved: true };
    } catch (err) {
      if (err instanceof RunStopped) throw err;
      if (err instanceof Rejected) return { approved: false, reason: err.message };
      throw err;
    }
  }

  /** Run the call the framework now executes: claim it (a token, exactly once), run `fn`
   *  with the approved arguments, report how it went. Throws when no approval is held. */
  async run<R>(callId: string | undefined, fn: (args: Args) => Promise<R> | R): Promise<R> {
    const held = callId === undefined ? undefined : this.approved.get(callId);
    if (held === undefined || callId === undefined) {
      throw new HitlError(msg.NOT_DECIDED(callId ?? "(none)"), "not_decided");
    }
    this.approved.delete(callId);
    const claimed = await this.hitl.claim(held.id);
    const fence = claimed.fence ?? "";
    let result: R;
    try {
      result = await fn(claimed.args);
    } catch (err) {
      await this.hitl.report(claimed.id, { ok: false, detail: String(err), fence });
      throw err;
    }
    await this.hitl.report(claimed.id, { ok: true, detail: describe(result), fence });
    return result;
  }
}

/** A framework's tool input as the call's arguments: an object as it is; anything else
 *  (a string, a list) under `input`, so a person still sees exactly what would run. */
function argsOf(input: unknown): Args {
  if (input !== null && typeof input === "object" && !Array.isArray(input)) return input as Args;
  return { input: (input ?? null) as Args[string] };
}
