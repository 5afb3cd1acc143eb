-- Calls are no longer indexed by tool. Every index costs each insert, and
-- this one the most where calls go to several tools: each record's entry
-- lands amid the tree, not at its end, so SQLite walks it from the root and
-- splits pages in the middle. BenchmarkWrite with calls spread over 8
-- tools (2026-11-27, 3 interleaved runs): the background writer's CPU per
-- record 6.6-7.1 µs with the index, 5.2-5.6 µs without. A listing by
-- tool reads the records newest first until its page is full, as one by
-- caller does; with a conversation it goes through calls_conversation.
-- The records themselves are untouched.
DROP INDEX IF EXISTS calls_tool;
