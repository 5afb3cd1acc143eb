-- Artifacts belong to an owner (the API key that made them; '' without
-- keys), and an ID names an artifact within its owner: every read and write
-- names the owner, so one owner can neither reach another's artifacts nor
-- learn that an ID is taken. Artifacts made before belong to ''.
ALTER TABLE artifacts ADD COLUMN owner text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE artifacts DROP CONSTRAINT artifacts_pkey;
ALTER TABLE artifacts ADD PRIMARY KEY (owner, id, version);
