-- Lifetime value (issue 25): the operator's dated exchange rates, and the nightly job's cohorts per website.

-- A rate is the value of one unit of `currency` in US dollars (EUR 1.08: one euro is worth 1.08 USD) from
-- `effective_date` on, until a later date of the same currency. A purchase takes the latest rate dated on or
-- before its day (in the website's time zone); USD is 1 by definition and is never stored. Converting between
-- two other currencies crosses through USD: amount × rate(from) / rate(to), both dated as above.
CREATE TABLE exchange_rates (
  currency        text NOT NULL CHECK (currency ~ '^[A-Z]{3}$' AND currency <> 'USD'),
  effective_date  date NOT NULL,
  usd_per_unit    numeric NOT NULL CHECK (usd_per_unit > 0),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (currency, effective_date)
);

-- One website's latest LTV computation (the job replaces it whole): what it covered and its summary.
CREATE TABLE ltv_snapshots (
  website_id              uuid PRIMARY KEY REFERENCES websites(id) ON DELETE CASCADE,
  -- The last local day whose purchases are included; periods run up to the one containing it.
  as_of                   date NOT NULL,
  currency                text NOT NULL,
  average_ltv_30d         double precision NOT NULL,
  average_ltv_90d         double precision NOT NULL,
  customers_30d           integer NOT NULL,
  customers_90d           integer NOT NULL,
  -- Purchases left out: in a currency without an applicable rate (with those currencies), or with neither a
  -- visitor id nor a customer_email to tell whose they are.
  unconverted_purchases   integer NOT NULL,
  unconverted_currencies  text[] NOT NULL,
  unattributed_purchases  integer NOT NULL,
  computed_at             timestamptz NOT NULL
);

-- Cohorts of the snapshot: customers by the week (Monday) or month of their first succeeded purchase, and the
-- cumulative revenue per customer at the end of each period since (index 0 = the cohort's own period).
CREATE TABLE ltv_cohorts (
  website_id    uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  granularity   text NOT NULL CHECK (granularity IN ('weekly', 'monthly')),
  cohort_date   date NOT NULL,
  customers     integer NOT NULL,
  cumulative    double precision[] NOT NULL,
  PRIMARY KEY (website_id, granularity, cohort_date)
);
