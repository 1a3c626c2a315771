-- The console's reads of orders: GET /orders?cancellationReason= and GET /orders/stats.
-- All three are partial indexes on ended orders: creating an order writes none of them, and the
-- UPDATE that ends an order (non-HOT already: it changes the indexed status) adds one entry to one
-- or two of them. No column is added: waitingFor is computed from the timeline when read
-- (src/store/waiting.ts).
-- IF NOT EXISTS: on a large table build them beforehand with CREATE INDEX CONCURRENTLY (same names
-- and definitions); this migration then takes no lock that would hold the writers while it builds.

-- GET /orders?cancellationReason=: newest first within a reason, keyset on (created_at, id).
CREATE INDEX IF NOT EXISTS "orders_cancellation_reason_created_at_id_idx"
    ON "orders"("cancellation_reason", "created_at", "id") WHERE "cancellation_reason" IS NOT NULL;

-- GET /orders/stats: the orders that ended in the window, with their creation time for the latency
-- (INCLUDE: read from the index alone), and the CONFIRMED and CANCELLED counts.
CREATE INDEX IF NOT EXISTS "orders_confirmed_at_idx"
    ON "orders"("confirmed_at") INCLUDE ("created_at") WHERE "confirmed_at" IS NOT NULL;
CREATE INDEX IF NOT EXISTS "orders_cancelled_at_idx"
    ON "orders"("cancelled_at") INCLUDE ("created_at") WHERE "cancelled_at" IS NOT NULL;
