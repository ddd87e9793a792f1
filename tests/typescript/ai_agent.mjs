// An agent on the Vercel AI SDK (`ai`), its approvals decided in Slack through the
// packed client's adapter; the model is the scripted one at MODEL_URL. Driven by
// test_runtimes.py: each conversation prints one JSON line.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, tool } from "ai";
import { z } from "zod";
import { Hitl } from "@hitl-bot/client";
import { AiSdkApprovals } from "@hitl-bot/client/ai";
import { runSessions } from "./sessions.mjs";

const provider = createOpenAICompatible({ name: "scripted", baseURL: process.env.MODEL_URL, apiKey: "none" });
const model = provider.chatModel("scripted");
const approvals = new AiSdkApprovals(Hitl.fromEnv(), { runId: process.env.RUN_ID, runTitle: "Refunds (AI SDK)" });
const ran = [];

const refund = tool({
  description: "Refund an order",
  inputSchema: z.object({ order: z.string(), amount: z.number() }),
  needsApproval: true,
  execute: approvals.execute(async ({ order, amount }) => {
    ran.push({ order, amount });
    return `refunded ${order}`;
  }),
});

async function converse(prompt, wait) {
  const messages = [{ role: "user", content: prompt }];
  for (;;) {
    const result = await generateText({ model, tools: { refund }, messages });
    messages.push(...result.response.messages);
    const reply = await approvals.respond(result.content, wait);
    if (reply === null) return result.text;
    messages.push(reply);
  }
}

await runSessions(converse, ran);
