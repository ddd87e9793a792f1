// An agent written against the packed @hitl-bot/client, driven step by step by
// test_client.py: each step prints one JSON line; a line on stdin says "go on".
import readline from "node:readline";
import { Cancelled, Hitl, HitlError, Rejected, RunStopped, Steered, TimedOut } from "@hitl-bot/client";

const hitl = Hitl.fromEnv();
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const goOn = async () => (await input.next()).value;
const caught = (err) => ({
  name: err.constructor.name,
  message: err.message,
  text: err.text ?? null,
  actor: err.actor ?? null,
  reasonCode: err.reasonCode ?? null,
  request: err.request?.id ?? null,
  kinds: [
    ["HitlError", HitlError], ["Rejected", Rejected], ["TimedOut", TimedOut],
    ["Steered", Steered], ["Cancelled", Cancelled], ["RunStopped", RunStopped],
  ].filter(([, cls]) => err instanceof cls).map(([name]) => name),
});
const attempt = async (step, fn) => {
  try {
    say({ step, result: await fn(), error: null });
  } catch (err) {
    if (!(err instanceof HitlError)) throw err;
    say({ step, result: null, error: caught(err) });
  }
};

const refund = hitl.requireApproval("refund", async (args) => `refunded ${args.order}`);
await attempt("approve", () => refund({ order: "A1", amount: 5 }));
await attempt("reject", () => hitl.approve({ tool: "refund", args: { order: "A2", amount: 7 } }));
await attempt("timeout", () =>
  hitl.approve({ tool: "refund", args: { order: "A3", amount: 1 } }, { timeoutSeconds: 1 }),
);
await attempt("ask", () => hitl.ask("Which order?", { options: ["A1", "A2"] }));

const run = process.env.RUN_ID;
const boundary = hitl.boundary(run);
const lookup = boundary.wrap(async (order) => `looked up ${order}`);
await attempt("clear", () => lookup("A1"));
await goOn(); // a person queued a correction
await attempt("steered", () => lookup("A2"));
await attempt("after", () => lookup("A3"));
await attempt("stop", () =>
  hitl.approve({ tool: "refund", args: { order: "A4", amount: 3 }, runId: run }),
);
await attempt("aborted", () => lookup("A5"));
say({ step: "signal", result: boundary.signal.aborted, error: null });
process.exit(0);
