// The mission's claw machine, "human in the loop, from scratch": one fetch-only loop over
// an OpenAI-compatible model. Its three points, approve, answer and the queued correction,
// are hitl-bot's here; every line marked `// +` is what changed from the mission's loop.
// Run by tests/typescript/test_claw_loop.py against the scripted claw model and a real
// serve; each tool result is printed as one JSON line, and the first move waits for "go".
import { Hitl, Rejected, RunStopped } from "@hitl-bot/client"; // +

declare const process: { // Node's, without @types/node
  env: Record<string, string | undefined>;
  stdin: AsyncIterable<unknown>;
  stdout: { write(text: string): boolean };
  exit(code: number): never;
};

const LLM = { baseURL: process.env.LLM_URL ?? "", model: "claw", apiKey: "none" };
const hitl = Hitl.fromEnv(); // +
const runId = process.env.RUN_ID ?? ""; // + the run people answer and steer in Slack
const boundary = hitl.boundary(runId); // +

// The machine (your code): where the claw is, and what it grabs.
const PRIZES: Record<string, [number, number]> = {
  bear: [-20, 0], penguin: [15, 0], unicorn: [0, 20], duck: [10, 10],
};
const STEPS: Record<string, [number, number]> = {
  left: [-1, 0], right: [1, 0], forward: [0, 1], back: [0, -1],
};
let x = 0;
let y = 0;
const under = () =>
  Object.keys(PRIZES).find((p) => Math.abs(PRIZES[p][0] - x) <= 3 && Math.abs(PRIZES[p][1] - y) <= 3);
const input = process.stdin[Symbol.asyncIterator]();
let firstMove = true;
async function moveClaw({ direction, cm }: Record<string, string | number>): Promise<string> {
  const [dx, dy] = STEPS[String(direction)];
  x += dx * Number(cm);
  y += dy * Number(cm);
  if (firstMove) {
    firstMove = false;
    say({ step: "moved" });
    await input.next(); // the test queues a correction here
  }
  return `Moved ${direction} ${cm} cm; the claw is at x=${x}, y=${y}.`;
}
async function dropClaw({ target }: Record<string, string | number>): Promise<string> {
  const got = under();
  return got === target ? `Grabbed the ${got}!` : `The claw came up empty: it was not over the ${target}.`;
}
const say = (o: object) => process.stdout.write(JSON.stringify(o) + "\n");

type ToolFn = (args: Record<string, string | number>) => Promise<string>;
const tools: Record<string, ToolFn> = {
  move_claw: moveClaw,
  drop_claw: hitl.requireApproval("drop_claw", dropClaw, { runId }), // + 2. APPROVE: the exact call waits for a click
  // 1. ESCALATE: the model asks, a person answers.
  ask_kid: ({ question }) => hitl.ask(String(question), { runId }), // +
};
const schema = (name: string, properties: object, required: string[]) => ({
  type: "function", function: { name, parameters: { type: "object", properties, required } },
});
const toolSchemas = [
  schema("move_claw", { direction: { type: "string" }, cm: { type: "integer" } }, ["direction", "cm"]),
  schema("drop_claw", { target: { type: "string" } }, ["target"]),
  schema("ask_kid", { question: { type: "string" } }, ["question"]),
];
const NEEDS_APPROVAL = new Set(["drop_claw"]);

type ToolCall = { id: string; function: { name: string; arguments: string } };
type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export async function runAgent(prompt: string, maxTurns = 20): Promise<string> {
  const messages: Message[] = [
    { role: "system", content: "You work a claw machine for Tina. If you are not sure which prize she means, ask her before acting." },
    { role: "user", content: prompt },
  ];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const res = await fetch(`${LLM.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${LLM.apiKey}` },
      body: JSON.stringify({ model: LLM.model, messages, tools: toolSchemas }),
    });
    const [choice] = (await res.json()).choices;
    const reply: Message = choice.message;
    messages.push(reply);
    if (choice.finish_reason !== "tool_calls") return reply.content ?? "";

    for (const call of (reply as { tool_calls?: ToolCall[] }).tool_calls ?? []) {
      const name = call.function.name;
      const args = JSON.parse(call.function.arguments);
      let output: string;
      const steer = await boundary.before(); // + 3. STEER: a correction queued in Slack, or a stop (throws)
      if (steer !== null) {
        // The tool boundary: a queued correction cancels this call, and the model reads it instead.
        output = steer;
      } else if (NEEDS_APPROVAL.has(name)) {
        try {
          output = await tools[name](args); // + runs once a person approves, with what they approved
        } catch (err) {
          if (!(err instanceof Rejected)) throw err; // +
          output = "Tina said no. Ask her what to do.";
        }
      } else {
        output = tools[name] ? await tools[name](args) : `Unknown tool: ${name}`;
      }
      say({ step: "tool", name, output });
      messages.push({ role: "tool", tool_call_id: call.id, content: output });
    }
  }
  throw new Error(`No answer after ${maxTurns} turns`);
}

try {
  say({ step: "done", output: await runAgent(process.env.PROMPT ?? "Get me the bear!") });
} catch (err) {
  if (!(err instanceof RunStopped)) throw err; // + a person's stop ends the run
  say({ step: "stopped", output: err.message });
}
process.exit(0);
