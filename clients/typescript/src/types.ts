// The API's records, as GET /v1/... returns them (snake_case, as on the wire).

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type Args = { [key: string]: JsonValue };

export type RequestState =
  | "pending_review"
  | "approved"
  | "auto_approved"
  | "executing"
  | "completed"
  | "rejected"
  | "cancelled"
  | "escalated"
  | "auto_rejected"
  | "failed"
  | "rollback_pending"
  | "rolled_back"
  | "manual_intervention";

export interface Resolution {
  actor: string;
  at: number;
  event: string;
  reason_code?: string | null;
  text?: string | null;
}

export interface ApprovalRequest {
  id: string;
  tool: string;
  args: Args;
  state: RequestState;
  risk: string;
  requester: string;
  run_id?: string | null;
  payload_hash: string;
  original_hash?: string | null;
  expires_at?: number | null;
  resolution?: Resolution | null;
  /** Set by a claim: pass it to the action and send it with the result. */
  fence?: string | null;
  version: number;
  [more: string]: unknown;
}

export type QuestionState = "open" | "answered" | "expired" | "cancelled";

export interface Question {
  id: string;
  run_id?: string | null;
  question: string;
  options: string[];
  state: QuestionState;
  answer?: string | null;
  answered_by?: string | null;
  answered_at?: number | null;
  expires_at: number;
  [more: string]: unknown;
}

export interface Steering {
  id: string;
  run_id: string;
  text: string;
  actor: string;
  at: number;
  hard_stop: boolean;
  source?: string | null;
}

export interface Run {
  id: string;
  run_id: string;
  state: string;
  stop_requested: boolean;
  waiting_on?: string | null;
  [more: string]: unknown;
}

/** A call to file: the exact tool and arguments a person reviews. */
export interface Call {
  tool: string;
  args: Args;
  runId?: string;
  runTitle?: string;
  onBehalfOf?: string;
  channel?: string;
  idempotencyKey?: string;
  risk?: "low" | "medium" | "high" | "critical";
  argsSchema?: { [key: string]: JsonValue };
}

export interface WaitOptions {
  /** Give up (withdraw the request, throw TimedOut) after this many seconds. */
  timeoutSeconds?: number;
}
