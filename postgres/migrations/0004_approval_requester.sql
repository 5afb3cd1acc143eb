-- An approval keeps who asked for the call as the server authenticated them
-- (an API key's ID), so that the key that asked can be refused the decision
-- on its own call. NULL: no authenticated requester (the CLI, a program, a
-- server without keys).
ALTER TABLE approvals ADD COLUMN requested_by text;
