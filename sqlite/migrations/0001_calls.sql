-- Call records: one row per finished call.
--
-- The columns that queries filter on come first, the large ones last, so that
-- statistics and filters never read a row's overflow pages. Empty strings are
-- stored as NULL so that the partial indexes below skip calls without a
-- conversation, caller, workflow, user or idempotency key. Times are Unix
-- microseconds, durations nanoseconds.
CREATE TABLE calls (
	seq               INTEGER PRIMARY KEY,
	id                TEXT    NOT NULL,
	tool              TEXT    NOT NULL,
	ok                INTEGER NOT NULL,
	queued_at         INTEGER,
	duration_ns       INTEGER NOT NULL,
	category          TEXT,
	conversation_id   TEXT,
	caller_id         TEXT,
	workflow_id       TEXT,
	user_id           TEXT,
	idempotency_key   TEXT,
	digest            TEXT,    -- of the canonical arguments, for idempotent replays
	approval_id       TEXT,    -- the approval the call resumed with
	caller_type       TEXT,
	tool_version      TEXT,
	error_type        TEXT,
	attempts          INTEGER NOT NULL,
	started_at        INTEGER,
	finished_at       INTEGER,
	queue_wait_ns     INTEGER NOT NULL,
	timeout_ns        INTEGER NOT NULL,
	priority          INTEGER NOT NULL,
	error             TEXT,
	validation_errors TEXT,    -- JSON array
	metadata          TEXT,    -- JSON object
	variables         TEXT,    -- JSON object: the caller's variables
	raw_arguments     BLOB,    -- as the caller sent them, valid JSON or not
	arguments         BLOB,    -- after coercion and defaults
	output            BLOB,    -- what the model got
	full_output       BLOB     -- the whole output when output was cut, else NULL
);

-- IDs are time-ordered, so ORDER BY id DESC is newest first and the cursor of
-- a page is the last id it returned. Every index costs each insert: a caller
-- has none (its calls are those of its conversations), and workflows, users,
-- failures and idempotency keys have partial ones, which rows without them
-- skip.
CREATE UNIQUE INDEX calls_id ON calls (id);
CREATE INDEX calls_conversation ON calls (conversation_id, id) WHERE conversation_id IS NOT NULL;
CREATE INDEX calls_tool ON calls (tool, id);
CREATE INDEX calls_workflow ON calls (workflow_id, id) WHERE workflow_id IS NOT NULL;
CREATE INDEX calls_user ON calls (user_id, id) WHERE user_id IS NOT NULL;
CREATE INDEX calls_queued ON calls (queued_at);
CREATE INDEX calls_failed ON calls (id) WHERE ok = 0;
CREATE INDEX calls_replay ON calls (tool, idempotency_key, id) WHERE idempotency_key IS NOT NULL AND ok = 1;
