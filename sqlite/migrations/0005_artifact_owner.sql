-- Artifacts belong to an owner (the API key that made them; '' without
-- keys), and an ID names an artifact within its owner: every read and write
-- names the owner, so one owner can neither reach another's artifacts nor
-- learn that an ID is taken. The primary key becomes (owner, id, version),
-- which takes a new table in SQLite; artifacts made before belong to ''.
CREATE TABLE artifact_versions_owned (
	owner           TEXT    NOT NULL,
	id              TEXT    NOT NULL,
	version         INTEGER NOT NULL,
	title           TEXT    NOT NULL,
	type            TEXT    NOT NULL,
	content         TEXT    NOT NULL,
	conversation_id TEXT    NOT NULL,
	created_at      INTEGER NOT NULL, -- Unix microseconds
	PRIMARY KEY (owner, id, version)
);
INSERT INTO artifact_versions_owned (owner, id, version, title, type, content, conversation_id, created_at)
	SELECT '', id, version, title, type, content, conversation_id, created_at FROM artifact_versions;
DROP TABLE artifact_versions;
ALTER TABLE artifact_versions_owned RENAME TO artifact_versions;
