// Defaults that the configuration and the parts it configures both read.

/**
 * With many transactions at once on few cores, each costs PostgreSQL more CPU: through 10 connections
 * rather than 20 it spent less a publish and took more publishes a second (docs/decisions/pool-size.md).
 */
export const DEFAULT_POOL_SIZE = 10;
