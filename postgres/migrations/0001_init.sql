-- The first schema of wield's PostgreSQL store: call records, approvals and
-- artifacts. Times are Unix nanoseconds (bigint), so that records read back
-- exactly as they were saved and time ranges compare without rounding;
-- to_timestamp(queued_at / 1e9) shows one to a person. Free-form JSON the
-- store does not query (arguments, outputs) is bytea: it is kept byte for
-- byte, even when a model sent something that is not JSON.

CREATE TABLE calls (
    id              text COLLATE "C" PRIMARY KEY, -- wield.NewID: time-ordered
    tool            text NOT NULL,
    tool_version    text NOT NULL DEFAULT '',
    category        text NOT NULL DEFAULT '',
    caller_id       text NOT NULL DEFAULT '',
    caller_type     text NOT NULL DEFAULT '',
    conversation_id text NOT NULL DEFAULT '',
    workflow_id     text NOT NULL DEFAULT '',
    user_id         text NOT NULL DEFAULT '',
    idempotency_key text NOT NULL DEFAULT '',
    digest          text NOT NULL DEFAULT '',
    ok              boolean NOT NULL,
    error_type      text NOT NULL DEFAULT '',
    error           text NOT NULL DEFAULT '',
    attempts        integer NOT NULL DEFAULT 0,
    queued_at       bigint,
    started_at      bigint,
    finished_at     bigint,
    duration        bigint NOT NULL DEFAULT 0, -- nanoseconds, queueing included
    queue_wait      bigint NOT NULL DEFAULT 0, -- nanoseconds
    raw_arguments   bytea,  -- as the model sent them (secrets redacted)
    arguments       bytea,  -- after coercion and defaults (secrets redacted)
    output          bytea,  -- what the model got
    full_output     bytea,  -- the whole output, when the model got a cut one
    extra           bytea   -- JSON of the rarely set fields (metadata, validation errors, ...)
);

-- One conversation, one tool, one caller: newest first, by id.
CREATE INDEX calls_conversation ON calls (conversation_id, id);
CREATE INDEX calls_tool ON calls (tool, id);
CREATE INDEX calls_caller ON calls (caller_id, id);
-- Failures, which are few: all of them, and one tool's.
CREATE INDEX calls_failed ON calls (id) WHERE NOT ok;
CREATE INDEX calls_tool_failed ON calls (tool, id) WHERE NOT ok;
-- Time ranges.
CREATE INDEX calls_queued ON calls (queued_at);
-- Idempotent replays look up successful calls by tool and key.
CREATE INDEX calls_replay ON calls (tool, idempotency_key, id) WHERE ok AND idempotency_key <> '';

CREATE TABLE approvals (
    id          text COLLATE "C" PRIMARY KEY,
    call_id     text NOT NULL DEFAULT '',
    tool        text NOT NULL,
    caller      bytea,          -- JSON of wield.Caller
    arguments   bytea,
    digest      text NOT NULL DEFAULT '',
    created_at  bigint NOT NULL,
    expires_at  bigint,         -- NULL: never
    status      text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    approved    boolean,
    decided_by  text NOT NULL DEFAULT '',
    reason      text NOT NULL DEFAULT '',
    decided_at  bigint
);

CREATE INDEX approvals_status ON approvals (status, created_at, id);

CREATE TABLE artifacts (
    id              text COLLATE "C" NOT NULL,
    version         integer NOT NULL CHECK (version > 0),
    title           text NOT NULL DEFAULT '',
    type            text NOT NULL DEFAULT '',
    content         text NOT NULL,
    conversation_id text NOT NULL DEFAULT '',
    created_at      bigint NOT NULL,
    -- Two writers of the same next version: the second fails, and is told
    -- the artifact changed.
    PRIMARY KEY (id, version)
);
