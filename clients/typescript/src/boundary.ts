// The check an agent makes before each tool call of a run, as hitl-bot's own worker
// does: a queued correction cancels the call and comes back as the tool's result; a
// stop aborts the run.

import * as msg from "./messages.js";
import { Rejected, RunStopped, Steered } from "./errors.js";
import type { Steering } from "./types.js";

interface Gate {
  steering(runId: string): Promise<Steering | null>;
  run(runId: string): Promise<{ state: string; stop_requested: boolean }>;
}

export class ToolBoundary {
  private readonly ctl = new AbortController();

  constructor(
    private readonly gate: Gate,
    readonly runId: string,
  ) {}

  /** Aborted once the run is found stopped: pass it to the run's long waits. */
  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  /** Before a tool call: null to go ahead; otherwise the correction's words, to hand
   *  the model as the tool's result instead of running it. Throws RunStopped when a
   *  person stopped the run. */
  async before(): Promise<string | null> {
    const s = await this.gate.steering(this.runId);
    if (s !== null) {
      if (s.hard_stop) this.stopped(msg.CALL_HARD_STOP(s.text), s);
      return msg.CALL_STEERED(s.text);
    }
    const run = await this.gate.run(this.runId);
    if (run.stop_requested || run.state === "stopped") this.stopped(msg.CALL_RUN_STOPPED, null);
    return null;
  }

  /** `tool`, checked at the boundary: a correction (or a gated call a correction
   *  withdrew, `Steered`) comes back as its result; a stop throws RunStopped. */
  wrap<A extends unknown[], R>(tool: (...args: A) => Promise<R> | R): (...args: A) => Promise<R | string> {
    return async (...args: A): Promise<R | string> => {
      const said = await this.before();
      if (said !== null) return said;
      try {
        return await tool(...args);
      } catch (err) {
        if (err instanceof RunStopped) this.stopped(err.message, null);
        if (err instanceof Steered) return err.message;
        if (err instanceof Rejected) return err.message; // the model reads why it did not run
        throw err;
      }
    };
  }

  private stopped(says: string, s: Steering | null): never {
    const err = new RunStopped(says, { text: s?.text ?? null, actor: s?.actor ?? null, reasonCode: "run_stopped" }, "run_stopped");
    this.ctl.abort(err);
    throw err;
  }
}
