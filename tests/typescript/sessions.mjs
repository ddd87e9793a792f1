// The six sessions test_runtimes.py drives every framework's agent through, in order: each
// prints one JSON line (what came back, or the typed error, and what the tool ran), so
// the test can act in Slack between them. `converse(prompt, wait)` is the framework's own.
import { HitlError } from "@hitl-bot/client";

export async function runSessions(converse, ran) {
  const say = (o) => process.stdout.write(JSON.stringify({ ...o, ran }) + "\n");
  const attempt = async (step, prompt, wait) => {
    try {
      say({ step, text: await converse(prompt, wait), error: null });
    } catch (err) {
      if (!(err instanceof HitlError)) throw err;
      say({ step, text: null, error: { name: err.constructor.name, message: err.message } });
    }
  };
  await attempt("approve", "Refund order A1");
  await attempt("edit", "Refund order A2");
  await attempt("reject", "Refund order A3");
  await attempt("steer", "Refund order A4");
  await attempt("timeout", "Refund order A5", { timeoutSeconds: 1 });
  await attempt("stop", "Refund order A6");
  process.exit(0);
}
