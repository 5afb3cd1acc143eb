-- The lease of an MCP task on its call ID's reservation: the server running
-- the call (lease_owner) renews it (lease_until) while the call runs, so a
-- server that finds it expired, with no record, knows the owner stopped
-- (killed, crashed) and reads the task failed. NULL: no lease (a call that
-- is no task).
ALTER TABLE call_ids ADD COLUMN lease_owner TEXT;
ALTER TABLE call_ids ADD COLUMN lease_until INTEGER; -- Unix microseconds
