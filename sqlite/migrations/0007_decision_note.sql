-- A decision keeps who made it (decided_by: the key, or the local user, as
-- the server knows them) apart from the free text the client sent with it
-- (note), so that no client can name the decider. NULL: no note.
ALTER TABLE approvals ADD COLUMN note TEXT;
