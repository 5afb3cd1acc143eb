-- Approvals: a pending call waiting for a person, bound to the digest of its
-- canonical arguments. A decision is a conditional UPDATE of a pending row,
-- so of two decisions at once exactly one changes it.
CREATE TABLE approvals (
	id          TEXT    PRIMARY KEY,
	call_id     TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	caller      TEXT    NOT NULL, -- JSON of wield.Caller
	arguments   BLOB,
	digest      TEXT    NOT NULL,
	created_at  INTEGER NOT NULL, -- Unix microseconds
	expires_at  INTEGER,          -- NULL: never
	status      TEXT    NOT NULL, -- pending, approved, denied or expired
	approved    INTEGER,
	decided_by  TEXT,
	reason      TEXT,
	decided_at  INTEGER,
	claimed_at  INTEGER           -- when the approved call started: it runs once
) WITHOUT ROWID;

CREATE INDEX approvals_status ON approvals (status, created_at);

-- Artifacts: every version is a row; version 1 is the creation. A new
-- version is written only when its base is the latest (PutArtifactVersion).
CREATE TABLE artifact_versions (
	id              TEXT    NOT NULL,
	version         INTEGER NOT NULL,
	title           TEXT    NOT NULL,
	type            TEXT    NOT NULL,
	content         TEXT    NOT NULL,
	conversation_id TEXT    NOT NULL,
	created_at      INTEGER NOT NULL, -- Unix microseconds
	PRIMARY KEY (id, version)
);
