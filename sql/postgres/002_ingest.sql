-- System-of-record rows written by the ingest workers (DESIGN §1): identified users and payments.

-- One row per (website, visitor); identify events merge their attributes into it.
CREATE TABLE identified_users (
  website_id     uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  visitor_id     text NOT NULL,
  email          text,
  name           text,
  customer_id    text,
  phone          text,
  company        text,
  attributes     jsonb NOT NULL DEFAULT '{}'::jsonb,
  first_seen_at  timestamptz NOT NULL,
  last_seen_at   timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (website_id, visitor_id)
);
CREATE INDEX identified_users_email_idx ON identified_users (website_id, lower(email)) WHERE email IS NOT NULL;
CREATE INDEX identified_users_customer_idx ON identified_users (website_id, customer_id) WHERE customer_id IS NOT NULL;

-- One row per accepted purchase event; event_id makes a retried write a no-op.
CREATE TABLE payments (
  event_id           uuid PRIMARY KEY,
  website_id         uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  visitor_id         text,
  session_id         text,
  amount             numeric(18, 4) NOT NULL,
  currency           text NOT NULL,
  payment_provider   text NOT NULL,
  status             text NOT NULL,
  provider_event_id  text,
  customer_email     text,
  plan_name          text,
  props              jsonb NOT NULL DEFAULT '{}'::jsonb,
  source             text NOT NULL,
  occurred_at        timestamptz NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payments_website_time_idx ON payments (website_id, occurred_at);
CREATE INDEX payments_website_visitor_idx ON payments (website_id, visitor_id);
