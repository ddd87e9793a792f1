// An agent on the Claude Agent SDK for TypeScript (`@anthropic-ai/claude-agent-sdk`),
// its `canUseTool` deciding through the packed client's adapter. Claude Code (the CLI
// the SDK ships) talks to the scripted Anthropic API at ANTHROPIC_BASE_URL. Driven by
// test_runtimes.py: each session prints one JSON line.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { Hitl } from "@hitl-bot/client";
import { claudeCanUseTool } from "@hitl-bot/client/claude-agent-sdk";
import { runSessions } from "./sessions.mjs";

const hitl = Hitl.fromEnv();
const ran = [];
const refund = tool("refund", "Refund an order", { order: z.string(), amount: z.number() }, async ({ order, amount }) => {
  ran.push({ order, amount });
  return { content: [{ type: "text", text: `refunded ${order}` }] };
});
const shop = createSdkMcpServer({ name: "shop", tools: [refund] });

async function converse(prompt, wait) {
  const canUseTool = claudeCanUseTool(hitl, { runId: process.env.RUN_ID, runTitle: "Refunds (Claude Agent SDK)", ...wait });
  let text = null;
  try {
    for await (const message of query({ prompt, options: { mcpServers: { shop }, canUseTool } })) {
      if (message.type === "result") text = message.result ?? null;
    }
  } catch (err) {
    throw canUseTool.stopped ?? err; // a stop interrupted the session: end the agent
  }
  return text;
}

await runSessions(converse, ran);
