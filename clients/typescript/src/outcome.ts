// What a request that left review means for the caller: run it, or the error saying why not.

import * as msg from "./messages.js";
import { Cancelled, HitlError, Rejected, RunStopped, Steered, TimedOut } from "./errors.js";
import type { ApprovalRequest, Steering } from "./types.js";

// Withdrawals a client makes itself when nobody decided: they read as TimedOut.
const WITHDRAW_REASONS = new Set(["caller_timeout", "no_sweeper", "caller_gone", "abandoned"]);

/**
 * The request if it may run; otherwise throw why not. `correction`: the run's queued
 * correction, read when a person's correction withdrew the call (`superseded`).
 */
export function outcome(req: ApprovalRequest, correction?: Steering | null): ApprovalRequest {
  const res = req.resolution ?? null;
  const actor = res?.actor ?? "system";
  const reason = res?.reason_code ?? null;
  const fields = { reasonCode: reason, text: res?.text ?? null, actor, request: req };
  if (req.state === "approved" || req.state === "auto_approved") return req;
  if (req.state === "auto_rejected") throw new TimedOut(msg.AUTO_REJECTED(req.tool), fields);
  if (req.state === "cancelled" || req.state === "rejected") {
    if (res?.event === "reject") {
      throw new Rejected(msg.REJECTED(req.tool, actor, reason ?? "", res.text ?? null), fields);
    }
    if (res?.event === "cancel" && reason === "superseded") {
      if (!correction) throw new Steered(msg.SUPERSEDED_NO_TEXT(req.tool), fields, "steered");
      const words = { ...fields, text: correction.text, actor: correction.actor };
      if (correction.hard_stop) {
        throw new RunStopped(msg.CALL_HARD_STOP(correction.text), words, "run_stopped");
      }
      throw new Steered(msg.CALL_STEERED(correction.text), words, "steered");
    }
    if (res?.event === "cancel" && reason === "run_stopped") {
      const says = `${msg.CANCELLED(req.tool, actor, reason)} ${msg.CALL_RUN_STOPPED}`;
      throw new RunStopped(says, fields, "run_stopped");
    }
    if (res?.event === "cancel") {
      const Cls = reason !== null && WITHDRAW_REASONS.has(reason) ? TimedOut : Cancelled;
      throw new Cls(msg.CANCELLED(req.tool, actor, reason ?? ""), fields);
    }
    throw new TimedOut(msg.NEVER_CLAIMED(req.tool), { ...fields, reasonCode: "not_claimed" });
  }
  throw new HitlError(msg.ALREADY_RAN(req.tool, req.id, req.state), "already_resolved");
}
