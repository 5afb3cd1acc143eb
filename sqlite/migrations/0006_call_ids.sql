-- Call IDs that callers chose, each taken before its call runs: a second
-- call under an ID already recorded, running or waiting for approval is
-- refused before its tool runs (a record is kept once the call finishes,
-- too late to refuse it then).
CREATE TABLE call_ids (
	id          TEXT    PRIMARY KEY,
	reserved_at INTEGER NOT NULL -- Unix microseconds
) WITHOUT ROWID;
