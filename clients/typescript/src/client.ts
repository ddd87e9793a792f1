// The gate for an agent in TypeScript: file the exact call, wait for a person (long-poll
// with a deadline), claim it with a token, report the outcome; ask; read corrections.

import * as msg from "./messages.js";
import { ApiError, HitlError, RunStopped, TimedOut, Unanswered } from "./errors.js";
import { Http, type Fetch } from "./http.js";
import { outcome } from "./outcome.js";
import { ToolBoundary } from "./boundary.js";
import type {
  ApprovalRequest,
  Args,
  Call,
  Question,
  Run,
  Steering,
  WaitOptions,
} from "./types.js";

export interface HitlOptions {
  /** The API's base url, e.g. http://127.0.0.1:3000 (HITL_API_URL). */
  url: string;
  /** A bearer token of HITL_API_TOKEN or HITL_API_TOKENS (HITL_API_TOKEN). */
  token: string;
  /** The review channel for calls and questions that name none. */
  channel?: string;
  /** Seconds each long-poll holds (the server caps it at 60). */
  pollSeconds?: number;
  /** Another fetch (tests, proxies); the platform's by default. */
  fetch?: Fetch;
  /**
   * The W3C `traceparent` of the agent's current span, sent with each call so the wait
   * for a person shows inside the agent's own trace (docs/tracing.md). A function is
   * asked at each call, e.g. one reading OpenTelemetry's active context; `fromEnv`
   * takes TRACEPARENT, the variable a traced parent process hands its children.
   */
  traceparent?: string | (() => string | undefined);
}

export interface AskOptions {
  options?: string[];
  runId?: string;
  channel?: string;
  /** Seconds the question stays open (default an hour). */
  timeoutSeconds?: number;
}

export interface Report {
  ok: boolean;
  detail?: string;
  /** With ok: false, you are undoing it: report the undo's outcome with a second report. */
  compensated?: boolean;
}

/** An approved, claimed call: run it with `args` and `fence`, then `report` how it went. */
export interface Approval {
  request: ApprovalRequest;
  /** The arguments a person approved (edited, or a candidate chosen, maybe). */
  args: Args;
  fence: string;
  report(outcome: Report): Promise<ApprovalRequest>;
}

const DETAIL_MAX = 3000; // the API's limit on free text

export class Hitl {
  readonly channel: string | undefined;
  private readonly http: Http;
  private readonly pollSeconds: number;

  constructor(opts: HitlOptions) {
    if (!opts.url || !opts.token) throw new HitlError(msg.NEED_URL_AND_TOKEN, "config");
    const fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    const trace = opts.traceparent;
    this.http = new Http(
      opts.url.replace(/\/+$/, ""),
      opts.token,
      fetchImpl,
      typeof trace === "function" ? trace : () => trace,
    );
    this.channel = opts.channel;
    this.pollSeconds = Math.min(Math.max(opts.pollSeconds ?? 30, 1), 60);
  }

  /** From HITL_API_URL and HITL_API_TOKEN (Node, Deno, Bun). */
  static fromEnv(env?: Record<string, string | undefined>): Hitl {
    const e = env ?? (globalThis as { process?: { env: Record<string, string | undefined> } })
      .process?.env ?? {};
    return new Hitl({
      url: e.HITL_API_URL ?? "",
      token: e.HITL_API_TOKEN ?? "",
      traceparent: e.TRACEPARENT || undefined,
    });
  }

  // Approvals

  /** File the exact call for review; the request, still pending_review (or already
   *  decided, by a standing approval or a policy that needs no review). Throws Steered
   *  or RunStopped when a person spoke to the run first: nothing was filed. */
  async submit(call: Call): Promise<ApprovalRequest> {
    const body = {
      tool: call.tool,
      args: call.args,
      run_id: call.runId,
      run_title: call.runTitle,
      on_behalf_of: call.onBehalfOf,
      channel: call.channel ?? this.channel,
      idempotency_key: call.idempotencyKey,
      risk: call.risk,
      args_schema: call.argsSchema,
    };
    return must(await this.http.call<ApprovalRequest>({ method: "POST", path: "/v1/approvals", body }));
  }

  async get(id: string): Promise<ApprovalRequest> {
    return must(await this.http.call<ApprovalRequest>({ method: "GET", path: `/v1/approvals/${enc(id)}`, repeatable: true }));
  }

  /** Wait for the request to leave review: it, approved; otherwise throw Rejected (with
   *  the person's reason), TimedOut, Steered, RunStopped or Cancelled. Past
   *  `timeoutSeconds` the request is withdrawn and TimedOut thrown. */
  async decision(request: ApprovalRequest | string, wait: WaitOptions = {}, signal?: AbortSignal): Promise<ApprovalRequest> {
    let req = typeof request === "string" ? await this.get(request) : request;
    const giveUp = wait.timeoutSeconds === undefined ? null : Date.now() + wait.timeoutSeconds * 1000;
    while (req.state === "pending_review" || req.state === "escalated") {
      const left = giveUp === null ? Infinity : (giveUp - Date.now()) / 1000;
      if (left <= 0) return this.withdraw(req, wait.timeoutSeconds ?? 0);
      const hold = Math.max(1, Math.min(this.pollSeconds, Math.ceil(left)));
      req = must(await this.http.call<ApprovalRequest>({
        method: "GET",
        path: `/v1/approvals/${enc(req.id)}?wait=${hold}`,
        holdSeconds: hold,
        repeatable: true,
        signal,
      }));
    }
    const superseded = req.resolution?.event === "cancel" && req.resolution.reason_code === "superseded";
    const correction = superseded && req.run_id ? await this.steering(req.run_id) : null;
    return outcome(req, correction);
  }

  private async withdraw(req: ApprovalRequest, seconds: number): Promise<ApprovalRequest> {
    try {
      const gone = await this.cancel(req.id, "caller_timeout");
      throw new TimedOut(msg.CALLER_TIMEOUT(req.tool, seconds), {
        reasonCode: "caller_timeout",
        actor: gone.requester,
        request: gone,
      });
    } catch (err) {
      // decided at the last moment: that decision stands
      if (err instanceof ApiError && err.status === 409) return outcome(await this.get(req.id));
      throw err;
    }
  }

  /** Claim an approved request, exactly once. Pass the same `claimToken` again after an
   *  error and you get the same claim back, never a second one. */
  async claim(id: string, claimToken: string = newClaimToken()): Promise<ApprovalRequest> {
    return must(await this.http.call<ApprovalRequest>({
      method: "POST",
      path: `/v1/approvals/${enc(id)}/claim`,
      body: { claim_token: claimToken },
      repeatable: true,
    }));
  }

  /** Report how the claimed call went, with the claim's fence. */
  async report(id: string, result: Report & { fence?: string | null }): Promise<ApprovalRequest> {
    const body = {
      ok: result.ok,
      detail: result.detail?.slice(0, DETAIL_MAX),
      compensated: result.compensated,
      fence: result.fence ?? undefined,
    };
    return must(await this.http.call<ApprovalRequest>({ method: "POST", path: `/v1/approvals/${enc(id)}/result`, body }));
  }

  /** Withdraw a request still in review (it never runs). */
  async cancel(id: string, reason?: string): Promise<ApprovalRequest> {
    return must(await this.http.call<ApprovalRequest>({ method: "POST", path: `/v1/approvals/${enc(id)}/cancel`, body: { reason } }));
  }

  /** File the exact call, wait for a person, claim it: the approval to run and report. */
  async approve(call: Call, wait: WaitOptions = {}, signal?: AbortSignal): Promise<Approval> {
    const filed = await this.submit(call);
    const approved = await this.decision(filed, wait, signal);
    const claimed = await this.claim(approved.id);
    const fence = claimed.fence ?? "";
    return {
      request: claimed,
      args: claimed.args,
      fence,
      report: (r: Report) => this.report(claimed.id, { ...r, fence }),
    };
  }

  /** `fn`, gated: each call files its exact arguments, runs once approved with the
   *  arguments the person approved, and reports its outcome (a throw reports a failure,
   *  then is thrown on). A call that is not approved throws and `fn` never runs. */
  requireApproval<A extends Args, R>(
    tool: string,
    fn: (args: A, approval: Approval) => Promise<R> | R,
    call: Omit<Call, "tool" | "args"> & WaitOptions = {},
  ): (args: A) => Promise<R> {
    const { timeoutSeconds, ...fields } = call;
    return async (args: A): Promise<R> => {
      const approval = await this.approve({ ...fields, tool, args }, { timeoutSeconds });
      let result: R;
      try {
        result = await fn(approval.args as A, approval);
      } catch (err) {
        await approval.report({ ok: false, detail: String(err) });
        throw err;
      }
      await approval.report({ ok: true, detail: describe(result) });
      return result;
    };
  }

  // Questions

  /** Ask a person; the answer (with `options`, the option chosen). Throws Unanswered
   *  once it expires, RunStopped when its run was stopped while it waited. */
  async ask(question: string, opts: AskOptions = {}): Promise<string> {
    return (await this.askAnswer(question, opts)).answer ?? "";
  }

  /** `ask`, returning the answered question (`answer`, `answered_by`). */
  async askAnswer(question: string, opts: AskOptions = {}): Promise<Question> {
    const timeout = opts.timeoutSeconds ?? 3600;
    let q = must(await this.http.call<Question>({
      method: "POST",
      path: "/v1/questions",
      body: {
        question,
        options: opts.options ?? [],
        run_id: opts.runId,
        channel: opts.channel ?? this.channel,
        timeout_seconds: timeout,
      },
    }));
    const deadline = Date.now() + (timeout + 1) * 1000;
    while (q.state === "open" && Date.now() < deadline) {
      const hold = Math.max(1, Math.min(this.pollSeconds, Math.ceil((deadline - Date.now()) / 1000)));
      q = must(await this.http.call<Question>({
        method: "GET",
        path: `/v1/questions/${enc(q.id)}?wait=${hold}`,
        holdSeconds: hold,
        repeatable: true,
      }));
    }
    if (q.state === "answered") return q;
    if (q.state === "cancelled" && q.run_id) {
      throw new RunStopped(msg.QUESTION_STOPPED, { reasonCode: "run_stopped" }, "run_stopped");
    }
    throw new Unanswered(msg.QUESTION_UNANSWERED(question, q.state === "open" ? "expired" : q.state), q);
  }

  // Runs

  /** Pop the oldest correction a person queued for the run; null when none. */
  async steering(runId: string): Promise<Steering | null> {
    return this.http.call<Steering>({ method: "GET", path: `/v1/runs/${enc(runId)}/steering` });
  }

  async run(runId: string): Promise<Run> {
    return must(await this.http.call<Run>({ method: "GET", path: `/v1/runs/${enc(runId)}`, repeatable: true }));
  }

  async stop(runId: string): Promise<Run> {
    return must(await this.http.call<Run>({ method: "POST", path: `/v1/runs/${enc(runId)}/stop` }));
  }

  async steer(runId: string, text: string): Promise<Steering> {
    return must(await this.http.call<Steering>({ method: "POST", path: `/v1/runs/${enc(runId)}/steer`, body: { text } }));
  }

  /** The check before each of the run's tool calls (see ToolBoundary). */
  boundary(runId: string): ToolBoundary {
    return new ToolBoundary(this, runId);
  }
}

/** A random claim token: 8 to 64 of A-Za-z0-9_-. */
export function newClaimToken(): string {
  const bytes = new Uint8Array(18);
  globalThis.crypto.getRandomValues(bytes);
  let s = "";
  for (const b of bytes) s += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[b % 64];
  return s;
}

/** A result as the outcome's detail: text, cut to the API's limit. */
export function describe(result: unknown): string | undefined {
  if (result === undefined) return undefined;
  const s = typeof result === "string" ? result : JSON.stringify(result);
  return s === undefined ? undefined : s.slice(0, DETAIL_MAX);
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function must<T>(value: T | null): T {
  if (value === null) throw new HitlError("The hitl-bot API answered with no body.", "empty");
  return value;
}
