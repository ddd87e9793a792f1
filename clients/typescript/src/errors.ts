/**
 * The errors the client throws, one root:
 *
 *   HitlError                  anything from hitl-bot (code: the API's error code)
 *   ├── ApiError               an answer the client has no finer class for (status)
 *   ├── Unanswered             a question expired (or was cancelled) with no answer
 *   └── Rejected               the call did not run: reasonCode, text, actor, request
 *       ├── TimedOut           nobody decided in time (or your own deadline passed)
 *       ├── Steered            a person's correction came first: hand `message` to the model
 *       └── Cancelled          withdrawn (an operator, or the run's stop)
 *           └── RunStopped     a person stopped the run: do nothing more
 */

import type { ApprovalRequest, Question } from "./types.js";

export class HitlError extends Error {
  readonly code: string;
  constructor(message: string, code = "hitl_error") {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

export class ApiError extends HitlError {
  readonly status: number;
  readonly body: Record<string, unknown>;
  constructor(message: string, status: number, code: string, body: Record<string, unknown> = {}) {
    super(message, code);
    this.status = status;
    this.body = body;
  }
}

export class Unanswered extends HitlError {
  readonly question: Question | null;
  constructor(message: string, question: Question | null = null) {
    super(message, "unanswered");
    this.question = question;
  }
}

export interface RejectedFields {
  reasonCode?: string | null;
  /** The person's own words: their reason, or their correction. */
  text?: string | null;
  /** Who decided, by Slack id (or "system"). */
  actor?: string | null;
  request?: ApprovalRequest | null;
}

export class Rejected extends HitlError {
  readonly reasonCode: string | null;
  readonly text: string | null;
  readonly actor: string | null;
  readonly request: ApprovalRequest | null;
  constructor(message: string, fields: RejectedFields = {}, code = "rejected") {
    super(message, code);
    this.reasonCode = fields.reasonCode ?? null;
    this.text = fields.text ?? null;
    this.actor = fields.actor ?? null;
    this.request = fields.request ?? null;
  }
}

export class TimedOut extends Rejected {}

/** `message` is what the model reads instead of the tool's result. */
export class Steered extends Rejected {}

export class Cancelled extends Rejected {}

export class RunStopped extends Cancelled {}
