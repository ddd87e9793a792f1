"""The records in Redis: requests, questions, runs, grants, digests, cards, threads and
their indexes; the keys, the codec and the Lua scripts that move them in one step.
Reached by the use cases in bot.gate; the connection beneath is bot.db's."""
