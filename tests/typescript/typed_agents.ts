// A user's TypeScript agents on both frameworks, type-checked by test_runtimes.py against
// the real packages' types and the client's shipped .d.ts (no call is made).
import { generateText, tool as aiTool, type ModelMessage, type LanguageModel } from "ai";
import { Agent, run, tool } from "@openai/agents";
import { z } from "zod";
import { Hitl } from "@hitl-bot/client";
import { AiSdkApprovals } from "@hitl-bot/client/ai";
import { OpenAIAgentsApprovals } from "@hitl-bot/client/openai-agents";

const hitl = new Hitl({ url: "http://127.0.0.1:3000", token: "t" });

const ai = new AiSdkApprovals(hitl, { runId: "r1", timeoutSeconds: 600 });
const refund = aiTool({
  description: "Refund an order",
  inputSchema: z.object({ order: z.string() }),
  needsApproval: true,
  execute: ai.execute(async ({ order }) => `refunded ${order}`),
});
export async function withAi(model: LanguageModel): Promise<string> {
  const messages: ModelMessage[] = [{ role: "user", content: "Refund A1" }];
  for (;;) {
    const result = await generateText({ model, tools: { refund }, messages });
    messages.push(...result.response.messages);
    const reply = await ai.respond(result.content);
    if (reply === null) return result.text;
    messages.push(reply);
  }
}

const agents = new OpenAIAgentsApprovals(hitl, { runId: "r2" });
const refund2 = tool({
  name: "refund",
  description: "Refund an order",
  parameters: z.object({ order: z.string() }),
  needsApproval: true,
  execute: agents.execute(async ({ order }) => `refunded ${order}`),
});
const agent = new Agent({ name: "Refunds", instructions: "Refund.", tools: [refund2] });
export async function withAgents(): Promise<unknown> {
  let result = await run(agent, "Refund A1");
  while (result.interruptions.length > 0) {
    await agents.decide(result);
    result = await run(agent, result.state);
  }
  return result.finalOutput;
}
