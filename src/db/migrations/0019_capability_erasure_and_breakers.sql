-- The capability plane's second half (docs/capabilities.md): erasure across capabilities, and the circuit
-- breakers their instances report.
--
-- An erasure is complete once Core and every capability asked have erased the subject; until then it is
-- pending, and it fails when one capability has not answered within the window (7 days).
alter table erasures add column state text not null default 'complete'
  check (state in ('complete', 'pending', 'failed'));
alter table erasures add column completed_at timestamptz;
update erasures set completed_at = created_at;

-- One task a capability asked about an erasure: pushed to its erasure URL (retried with back-off) or read
-- by the capability (pull). The subject is kept sealed (AES-GCM, the keyring) while the task is pending,
-- and forgotten once it is settled; never in clear.
create table erasure_tasks (
  project_id uuid not null,
  erasure_id uuid not null,
  capability text not null,
  mode text not null check (mode in ('push', 'pull')),
  state text not null default 'pending' check (state in ('pending', 'complete', 'failed', 'skipped')),
  sealed_subject bytea,
  erased bigint,
  attempts integer not null default 0,
  last_error text,
  next_attempt_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  primary key (erasure_id, capability),
  foreign key (project_id, erasure_id) references erasures (project_id, id) on delete cascade
);
create index erasure_tasks_due on erasure_tasks (next_attempt_at) where state = 'pending';
create index erasure_tasks_pulled on erasure_tasks (capability, created_at) where state = 'pending' and mode = 'pull';

-- What each instance of a capability last said of its providers' breakers; a report lives 30 s.
create table capability_breaker_reports (
  capability text not null references capabilities (name) on delete cascade,
  instance text not null,
  provider text not null,
  state text not null check (state in ('closed', 'open', 'half_open')),
  reported_at timestamptz not null default now(),
  primary key (capability, provider, instance)
);
