/**
 * The channel that wakes delivery workers: a statement that queues deliveries (or cancels them) sends a
 * NOTIFY on it, which PostgreSQL delivers only if the transaction commits. A payload names an endpoint
 * whose unsent deliveries the workers should let go of (cancelled or paused); '' means only "look".
 */
export const DELIVERIES_CHANNEL = 'platform_deliveries';
