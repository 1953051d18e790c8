-- Notifications (docs/notifications.md): what was sent, so that a re-run, a retried job or a second worker never
-- sends one message twice, and who asked to receive no more email about a website.

-- One row per message claimed: (website, kind, what it is about, who gets it). `subject` is the report's
-- period ("2026-11-16..2026-11-22") or the anomaly's id; `recipient` an email address (lower case) or "slack".
-- A row is written before sending and removed again when the send fails, so a later run tries once more.
CREATE TABLE notifications_sent (
  website_id  uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('weekly_report', 'monthly_report', 'anomaly_alert', 'anomaly_resolved',
                                            'webhook_disabled')),
  subject     text NOT NULL,
  recipient   text NOT NULL,
  sent_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (website_id, kind, subject, recipient)
);

-- An address that followed a report's unsubscribe link: no more reports or alerts about that website by email
-- (it stays listed in the preferences; docs/notifications.md says how to undo an unsubscribe).
CREATE TABLE notification_unsubscribes (
  website_id  uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  email       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (website_id, email)
);
