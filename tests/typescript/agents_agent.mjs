// An agent on the OpenAI Agents SDK for JavaScript (`@openai/agents`), its
// interruptions decided in Slack through the packed client's adapter; the model is the
// scripted one at MODEL_URL (chat completions). Driven by test_runtimes.py: each
// conversation prints one JSON line.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { Hitl } from "@hitl-bot/client";
import { OpenAIAgentsApprovals } from "@hitl-bot/client/openai-agents";
import { runSessions } from "./sessions.mjs";

setTracingDisabled(true); // nothing leaves the machine
const client = new OpenAI({ baseURL: process.env.MODEL_URL, apiKey: "none" });
const approvals = new OpenAIAgentsApprovals(Hitl.fromEnv(), { runId: process.env.RUN_ID, runTitle: "Refunds (Agents SDK)" });
const ran = [];

const refund = tool({
  name: "refund",
  description: "Refund an order",
  parameters: z.object({ order: z.string(), amount: z.number() }),
  needsApproval: true,
  execute: approvals.execute(async ({ order, amount }) => {
    ran.push({ order, amount });
    return `refunded ${order}`;
  }),
});
const agent = new Agent({
  name: "Refunds",
  instructions: "Refund what you are asked to.",
  tools: [refund],
  model: new OpenAIChatCompletionsModel(client, "scripted"),
});

async function converse(prompt, wait) {
  let result = await run(agent, prompt);
  while (result.interruptions?.length) {
    await approvals.decide(result, wait);
    result = await run(agent, result.state);
  }
  return result.finalOutput;
}

await runSessions(converse, ran);
