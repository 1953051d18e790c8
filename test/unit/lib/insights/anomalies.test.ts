// An anomaly's insight in words (lib/insights/anomalies.ts): counts, rates and goal conversions, the hour in the
// website's time zone, the deviation's sign, the suspect annotations.
import { anomalyInsight } from '../../../../lib/insights/anomalies';

const row = (over: object) => ({
  id: 'a1',
  website_id: 'w',
  metric_name: 'visitors',
  goal_name: null,
  expected_value: 100,
  actual_value: 350,
  deviation_percentage: 250,
  severity: 'critical' as const,
  started_at: new Date('2026-11-24T13:00:00Z'),
  detected_at: new Date('2026-11-24T14:05:00Z'),
  timezone: 'Europe/Paris',
  annotations: null,
  ...over,
});

it('a rise in a count, in the website’s hour', () => {
  expect(anomalyInsight(row({}))).toMatchObject({
    type: 'anomaly',
    rule: 'visitors',
    period: 'a1',
    severity: 'critical',
    title: 'Visitors 250% above normal',
    description:
      'In the hour from 2026-11-24 14:00 (Europe/Paris) there were 350 visitors against the 100 expected from the same hour of previous weeks (+250%).',
    metric_value: 350,
    metric_change: 250,
  });
});

it('a rate falls below, with its unit and the annotations named', () => {
  const d = anomalyInsight(
    row({
      metric_name: 'bounce_rate',
      expected_value: 80,
      actual_value: 20,
      deviation_percentage: 75,
      severity: 'info',
      annotations: ['Deploy v2', 'Campaign'],
    }),
  );
  expect(d.title).toBe('Bounce rate 75% below normal');
  expect(d.description).toBe(
    'In the hour from 2026-11-24 14:00 (Europe/Paris) the bounce rate was 20% against the 80% expected from the same hour of previous weeks (−75%). Changes noted within two hours of it: “Deploy v2”, “Campaign”.',
  );
  expect(d.metric_change).toBe(-75);
  expect(d.recommendation).toMatch(/^Start with the annotated changes near that hour\./);
});

it('a goal’s conversions name the goal', () => {
  const d = anomalyInsight(
    row({
      metric_name: 'goal_conversions',
      goal_name: 'Signup',
      expected_value: 40,
      actual_value: 4,
      deviation_percentage: 90,
    }),
  );
  expect(d.title).toBe('Conversions of the goal Signup 90% below normal');
  expect(d.description).toContain('there were 4 conversions of the goal Signup against the 40 expected');
  expect(d.subject).toBe('Signup');
  expect(d.recommendation).toContain('check that the goal’s form, page or checkout still works');
});
