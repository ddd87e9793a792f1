// One HTTP exchange with the API: the bearer token, JSON both ways, the error body
// turned into the typed error it stands for, and 503 retried for calls safe to repeat.

import * as msg from "./messages.js";
import { ApiError, RunStopped, Steered } from "./errors.js";

export type Fetch = typeof fetch;

const RETRIES = 3; // 503 (store unavailable, not replicated) on a call safe to repeat
const NETWORK_SLACK_MS = 15_000; // past a long-poll's own wait, before the socket gives up
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export interface Exchange {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  /** The server holds the answer up to this many seconds (a long-poll). */
  holdSeconds?: number;
  /** Safe to send again on a 503: reads, and a claim with the caller's token. */
  repeatable?: boolean;
  signal?: AbortSignal;
}

export class Http {
  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly fetchImpl: Fetch,
    private readonly traceparent: () => string | undefined = () => undefined,
  ) {}

  async call<T>(ex: Exchange): Promise<T | null> {
    for (let attempt = 0; ; attempt++) {
      const resp = await this.send(ex);
      if (resp.status === 503 && ex.repeatable && attempt < RETRIES) {
        const after = Number(resp.headers.get("retry-after") ?? "1");
        await sleep(Math.min(Math.max(after, 0.1), 5) * 1000, ex.signal);
        continue;
      }
      if (resp.status === 204) return null;
      const text = await resp.text();
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      if (!resp.ok) throw errorOf(resp.status, body);
      return body as T;
    }
  }

  private async send(ex: Exchange): Promise<Response> {
    const timeout = ((ex.holdSeconds ?? 0) * 1000) + NETWORK_SLACK_MS;
    const signals = [AbortSignal.timeout(timeout), ...(ex.signal ? [ex.signal] : [])];
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (ex.body !== undefined) headers["content-type"] = "application/json";
    const trace = this.traceparent();
    // W3C Trace Context's shape only: the server ignores any other, as the spec says.
    if (trace && TRACEPARENT.test(trace)) headers.traceparent = trace;
    try {
      return await this.fetchImpl(this.url + ex.path, {
        method: ex.method,
        headers,
        body: ex.body === undefined ? undefined : JSON.stringify(ex.body),
        signal: anySignal(signals),
      });
    } catch (err) {
      if (ex.signal?.aborted) throw err;
      throw new ApiError(msg.API_UNREACHABLE(this.url, String(err)), 0, "unreachable");
    }
  }
}

function errorOf(status: number, body: Record<string, unknown>): Error {
  const code = typeof body.error === "string" ? body.error : "http_" + status;
  const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body);
  const words = {
    text: typeof body.text === "string" ? body.text : null,
    actor: typeof body.actor === "string" ? body.actor : null,
    reasonCode: code,
  };
  // A person spoke before the call: nothing was filed; `detail` is what the model reads.
  if (code === "steered") return new Steered(detail, words, code);
  if (code === "run_stopped") return new RunStopped(detail, words, code);
  return new ApiError(msg.API_ERROR(status, detail), status, code, body);
}

function anySignal(signals: AbortSignal[]): AbortSignal {
  const any = (AbortSignal as unknown as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (any) return any(signals);
  const ctl = new AbortController(); // Node 18: no AbortSignal.any
  for (const s of signals) {
    if (s.aborted) ctl.abort(s.reason);
    s.addEventListener("abort", () => ctl.abort(s.reason), { once: true });
  }
  return ctl.signal;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
