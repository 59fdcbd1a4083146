export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
  /** Fraction of the nominal delay that may be shaved off at random. */
  readonly jitter: number;
}

/** 1 s, 2 s, 4 s … capped at 15 s, each up to 20 % shorter at random. */
export const RECONNECT_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 15_000, jitter: 0.2 };

/**
 * Delay before retry number `attempt` (0 for the first retry).
 *
 * Jitter only ever shortens the delay, so the documented schedule and cap stay
 * upper bounds while a page full of widgets (or many viewers after a server
 * restart) still spreads its reconnects out.
 */
export function backoffDelay(
  attempt: number,
  random: () => number = Math.random,
  policy: BackoffPolicy = RECONNECT_BACKOFF,
): number {
  // Clamp the exponent so long outages cannot overflow to Infinity.
  const exponent = Math.min(Math.max(attempt, 0), 30);
  const nominal = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return Math.round(nominal * (1 - policy.jitter * random()));
}
