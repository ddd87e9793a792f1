"""The agent worker: a chat-completions loop with a person at the tool boundary.

`llm` talks to the model, `tools` describes what the model may call, `gate`
holds the three checks every call passes (steering, approval, execution),
`loop` runs one agent run step by step with its state in Redis, and `worker`
takes runs from the shared queue. Nothing here imports Slack: the two meet in
Redis.
"""
