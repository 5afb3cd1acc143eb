-- Approvals are single-use: claimed_at is set, once, when the approved call
-- starts to run (wield.ApprovalClaimer).
ALTER TABLE approvals ADD COLUMN claimed_at bigint;
