-- An approved call runs even when its caller went away: the approval keeps
-- the call's own timeout (nanoseconds; NULL: the tool's), and servers find
-- the approvals nobody has acted on (UnclaimedApprovals) through an index
-- of only those, few among many claimed.
ALTER TABLE approvals ADD COLUMN timeout bigint;

CREATE INDEX approvals_unclaimed ON approvals (created_at, id) WHERE claimed_at IS NULL;
